"""``hf_dataset``: a Hugging Face ``datasets`` dataset on disk, in the hub layouts of RACE or SQuAD.

The source is a directory that ``save_to_disk`` wrote (a ``DatasetDict``: ``dataset_dict.json``;
or one ``Dataset``: ``state.json``, such as one split's directory of a ``DatasetDict``) or a
``.parquet`` file. A ``DatasetDict`` of several splits gives the one named by ``split`` (``data=``
passes the split it reads: ``data.test=DIR`` reads DIR's ``test``); of one split, that split.

Columns: the RACE hub layout (``example_id, article, question, options, answer``) gives multiple
choice examples, the SQuAD hub layout (``id, title, context, question, answers{text,
answer_start}``) span examples (a row without answers: unanswerable, SQuAD v2.0); an ``edits``
column (``[{attack, detail}]``, what ``robust-mrc attacks apply format=hf`` writes) gives
the examples' edits. Rows go through the hub readers' converters (:mod:`.hub`), so a bad row is a
bad record named by its row and ``strict=False`` skips it; a source that is no dataset, or lacks a
layout's columns, is an error naming the path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from robust_mrc.data.errors import DataFormatError
from robust_mrc.data.examples import MCExample, SpanExample
from robust_mrc.data.readers._common import Collector
from robust_mrc.data.readers.hub import race_table, squad_table

PARQUET = ".parquet"
RACE_COLUMNS = ("example_id", "article", "question", "options", "answer")
SQUAD_COLUMNS = ("id", "context", "question", "answers")
_NOT_A_DATASET = (
    "not a Hugging Face datasets directory: no dataset_dict.json or state.json (what save_to_disk writes); "
    "give the directory save_to_disk wrote, one of its split directories, or a .parquet file"
)


def is_dataset_dir(path: Path) -> bool:
    """Whether ``path`` is a directory that ``save_to_disk`` wrote (a ``DatasetDict`` or a ``Dataset``)."""
    return path.is_dir() and ((path / "dataset_dict.json").is_file() or (path / "state.json").is_file())


def is_dataset_source(path: Path) -> bool:
    """A ``save_to_disk`` directory or a ``.parquet`` file: what :func:`iter_hf_dataset` reads."""
    return is_dataset_dir(path) or (path.suffix.lower() == PARQUET and not path.is_dir())


_CAP = "the cap on one data file; if it is genuine, raise it with +data.max_bytes=<bytes, e.g. 8GiB> or ROBUST_MRC_MAX_DATA_BYTES"


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def read_rows(path: Path, split: str | None, max_bytes: int | None = None) -> tuple[str, list[str], list[dict]]:
    """``(where, columns, rows)`` of the dataset at ``path``: ``where`` names it in messages
    (``PATH[split]`` for a split of a ``DatasetDict``)."""
    if not path.exists():
        raise DataFormatError(path, None, "file not found: no such file or directory")
    if path.is_dir():
        if not is_dataset_dir(path):
            raise DataFormatError(path, None, _NOT_A_DATASET)
        on_disk = sum(f.stat().st_size for f in path.rglob("*.arrow"))  # arrow files hold the rows decoded
        if max_bytes and on_disk > max_bytes:
            raise DataFormatError(path, None, f"too large: its arrow files hold {on_disk:,} bytes, more than {max_bytes:,}, {_CAP}")
        import datasets

        try:
            loaded = datasets.load_from_disk(str(path))
        except Exception as e:  # noqa: BLE001 - a damaged or foreign directory: name it
            raise DataFormatError(path, None, f"cannot load with datasets.load_from_disk: {type(e).__name__}: {_short(e)}") from None
        where = str(path)
        if isinstance(loaded, datasets.DatasetDict):
            names = list(loaded)
            if split in loaded:
                name = split
            elif len(names) == 1:
                name = names[0]
            else:
                asked = f"none is {split!r}" if split else "none was named"
                example = path / names[0]
                raise DataFormatError(path, None, f"holds the splits {names} and {asked}: give one split's directory, e.g. {example}")
            loaded, where = loaded[name], f"{path}[{name}]"
        return where, list(loaded.column_names), loaded.to_list()
    if path.suffix.lower() != PARQUET:
        raise DataFormatError(path, None, f"format hf_dataset reads a save_to_disk directory or a {PARQUET} file")
    if max_bytes and os.path.getsize(path) > max_bytes:
        raise DataFormatError(
            path, None, f"file too large: it is {os.path.getsize(path):,} bytes, more than {max_bytes:,}, the cap on one data file"
        )
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows: list[dict] = []
    decoded = 0
    try:
        parquet = pq.ParquetFile(path)
        columns = list(parquet.schema_arrow.names)
        # decoded a few rows at a time: a small file can decode to gigabytes (dictionary and run-length
        # encodings), so the cap counts what is decoded, not the file on disk
        for batch in parquet.iter_batches(batch_size=64):
            decoded += batch.nbytes
            if max_bytes and decoded > max_bytes:
                raise DataFormatError(
                    path, None, f"too large: it decodes to more than {max_bytes:,} bytes (a {os.path.getsize(path):,}-byte file), {_CAP}"
                )
            rows += batch.to_pylist()
    except (pa.ArrowException, OSError) as e:
        raise DataFormatError(path, None, f"not a readable parquet file: {_short(e)}") from None
    return str(path), columns, rows


def layout(where: str, columns: list[str]) -> str:
    """``"mc"`` (RACE hub columns) or ``"span"`` (SQuAD hub columns); an error naming the missing ones."""
    have = set(columns)
    if have >= set(RACE_COLUMNS):
        return "mc"
    if have >= set(SQUAD_COLUMNS):
        return "span"
    race_missing = [c for c in RACE_COLUMNS if c not in have]
    squad_missing = [c for c in SQUAD_COLUMNS if c not in have]
    raise DataFormatError(
        where,
        None,
        f"missing columns: the RACE hub layout (multiple choice: {', '.join(RACE_COLUMNS)}) lacks {race_missing}, the SQuAD hub "
        f"layout (span QA: id, title, {', '.join(SQUAD_COLUMNS[1:])}) lacks {squad_missing}; the columns are {columns}",
    )


def iter_hf_dataset(
    path: Path, split: str | None, collector: Collector, max_bytes: int | None = None
) -> Iterator[MCExample] | Iterator[SpanExample]:
    """The examples of the dataset at ``path`` (see the module doc)."""
    where, columns, rows = read_rows(path, split, max_bytes)
    if layout(where, columns) == "mc":
        return race_table(where, rows, collector)
    return squad_table(where, rows, collector, unanswerable=True)
