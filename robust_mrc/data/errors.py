"""Errors and skip reports of the readers: every message names the file and the record."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from robust_mrc.core.errors import UserError

log = logging.getLogger(__name__)


class DataFormatError(UserError, ValueError):
    """A data file or record that cannot be read. The message names the file and the record."""

    def __init__(self, path: str | Path, record: str | int | None, reason: str):
        self.path = str(path)
        self.record = record
        self.reason = reason
        where = f"{self.path}" if record is None else f"{self.path}, record {record}"
        hint = "" if record is None else " (pass strict=false to skip bad records)"
        super().__init__(f"{where}: {reason}{hint}")


@dataclass
class SkipReport:
    """What a non-strict read skipped, counted by reason; and what any read kept with a remark
    (``notes``: legal but odd records, such as repeated options), counted by remark."""

    path: str
    skipped: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)  # the first few messages, for the log
    notes: Counter = field(default_factory=Counter)
    note_examples: list[str] = field(default_factory=list)

    def add(self, error: DataFormatError) -> None:
        self.skipped[error.reason.split(":")[0]] += 1
        if len(self.examples) < 5:
            where = error.path if error.record is None else f"{error.path}, record {error.record}"
            self.examples.append(f"{where}: {error.reason}")

    def note(self, where: str, remark: str) -> None:
        """A record kept as it is, with a remark ``"short remark: details"`` for the log."""
        self.notes[remark.split(":")[0]] += 1
        if len(self.note_examples) < 3:
            self.note_examples.append(f"{where}: {remark}")

    @property
    def total(self) -> int:
        return sum(self.skipped.values())

    def log(self) -> None:
        if self.total:
            reasons = ", ".join(f"{n} x {r}" for r, n in self.skipped.most_common())
            log.warning("%s: skipped %d bad record(s): %s", self.path, self.total, reasons)
        if self.notes:
            remarks = ", ".join(f"{n} x {r}" for r, n in self.notes.most_common())
            log.warning("%s: records kept as they are, with remarks: %s (e.g. %s)", self.path, remarks, "; ".join(self.note_examples))


class HubUnavailableError(UserError, RuntimeError):
    """The Hugging Face hub could not be reached (offline, no network) for a hub data set."""

    def __init__(
        self,
        name: str,
        detail: str = "",
        local_hint: str = "data=race_local data.train=<file> data.validation=<file>",
    ):
        self.name = name
        self.detail = detail
        cause = f" ({detail})" if detail else ""
        super().__init__(
            f"data set {name!r}: the Hugging Face hub could not be reached{cause}; give a local file instead, e.g. {local_hint}"
        )
