"""The journal of a model-in-the-loop search (:func:`robust_mrc.attacks.search.run_search`): each
lockstep group of searches, as it finishes, one line of a :class:`robust_mrc.core.journal.Journal`, so
that a search stopped after hours (AddAny over a thousand questions) goes on from its last group.
Used by evaluation suites (``searches/`` in the evaluation cache) and by ``robust-mrc
attacks apply ckpt=...`` (``<out>.partial.jsonl``). A journal that cannot be written
is named in a warning and the search goes on without it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from robust_mrc.attacks.search import SearchGroup
from robust_mrc.core.journal import Journal
from robust_mrc.data.examples import example_from_dict, example_to_dict

log = logging.getLogger(__name__)


class SearchJournal:
    """The finished lockstep groups of one model-in-the-loop search with ``settings``, journaled at
    ``path`` (``None``: not journaled, e.g. the evaluation cache is off)."""

    def __init__(self, path: str | Path | None, settings: dict):
        self.journal = Journal(path, settings) if path is not None else None

    def resume(self) -> dict[int, SearchGroup]:
        """The groups an interrupted run of this search finished; from here on, each new one is journaled."""
        if self.journal is None:
            return {}
        groups = {}
        for record in self.journal.load().values():
            try:
                group = SearchGroup(
                    int(record["id"]),
                    [None if d is None else example_from_dict(d) for d in record["chosen"]],
                    [int(q) for q in record["queries"]],
                    float(record["seconds"]),
                    int(record["rounds"]),
                )
            except (KeyError, TypeError, ValueError) as err:
                log.warning("%s: a damaged group record (%s): that group is searched again", self.journal.path, err)
                continue
            groups[group.start] = group
        try:
            self.journal.open({str(g.start): _group_record(g) for g in groups.values()})
        except OSError as err:
            log.warning("search journal %s cannot be written (%s): this search is not journaled", self.journal.path, err)
            self.journal = None
        if groups:
            searched = sum(len(g.chosen) for g in groups.values())
            log.info("%s: resuming the search, %d examples already searched", self.journal_path, searched)
        return groups

    @property
    def journal_path(self) -> Path | None:
        return self.journal.path if self.journal is not None else None

    def add(self, group: SearchGroup) -> None:
        if self.journal is None:
            return
        try:
            self.journal.append([_group_record(group)])
        except OSError as err:
            log.warning("search journal %s cannot be written (%s): the rest of this search is not journaled", self.journal.path, err)
            self.journal.close()
            self.journal = None

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()

    def finish(self) -> None:
        if self.journal is not None:
            self.journal.finish()


def _group_record(group: SearchGroup) -> dict:
    return {
        "id": str(group.start),
        "chosen": [None if ex is None else example_to_dict(ex) for ex in group.chosen],
        "queries": list(group.queries),
        "seconds": round(group.seconds, 4),
        "rounds": group.rounds,
    }
