"""A journal of a long job's finished pieces, kept on disk so that a crashed or preempted job
resumes where it stopped instead of starting again: a DG bank's beam search (hours on a CPU for all
DREAM questions: ``<out>.partial.jsonl``, :mod:`robust_mrc.banks.dg`) and an evaluation's
model-in-the-loop searches (AddAny on a thousand questions: ``searches/`` in the evaluation cache,
:mod:`robust_mrc.evaluation.suites`).

The file: a header line ``{"settings": {...}}`` and then one JSON line per finished piece (a record
with an ``"id"``), appended, flushed and synced as each piece finishes. A later run with the same
settings reads the finished pieces back and skips them; other settings (another checkpoint, beam
count, ...) start afresh, saying why. A last line cut off by the crash is dropped (that piece is
made again). The job's result is written atomically elsewhere; then the journal is removed.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def file_identity(path: str | Path) -> dict:
    """What tells one checkpoint file from another at the same path: its size and modification time."""
    st = Path(path).stat()
    return {"path": str(Path(path).resolve()), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


class Journal:
    """Finished records (``{"id": ..., ...}``) of a job with ``settings`` (JSON-able), at ``path``."""

    def __init__(self, path: str | Path, settings: dict[str, Any]):
        self.path = Path(path)
        self.settings = json.loads(json.dumps(settings))  # as it reads back from the file
        self._file = None
        self.resumed = 0  # records taken over from an interrupted build (set by :meth:`open`)

    def load(self) -> dict[str, dict]:
        """The records a former run with the same settings finished, by id (empty when none)."""
        if not self.path.is_file():
            return {}
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            header = json.loads(lines[0]) if lines else {}
        except json.JSONDecodeError:
            header = {}
        if header.get("settings") != self.settings:
            log.warning("%s was left by a run with other settings (or is damaged): starting afresh; it is replaced", self.path)
            return {}
        done: dict[str, dict] = {}
        for number, line in enumerate(lines[1:], 2):
            try:
                record = json.loads(line)
                done[str(record["id"])] = record
            except (json.JSONDecodeError, KeyError, TypeError):
                log.warning("%s line %d is cut off or damaged: that piece is made again", self.path, number)
        return done

    def open(self, done: dict[str, dict]) -> None:
        """Start writing: the header and the records of ``done`` (a clean copy without cut-off lines)."""
        self.resumed = len(done)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            f.write(json.dumps({"settings": self.settings}) + "\n")
            for record in done.values():
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self._file = self.path.open("a", encoding="utf-8")

    def append(self, records: Iterable[dict]) -> None:
        for record in records:
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def finish(self) -> None:
        """The job's result is written: close and remove the journal."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self.path.unlink(missing_ok=True)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
