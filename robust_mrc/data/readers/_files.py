"""File access of the readers: bytes in, gunzipped as a stream, refused past a size cap.

Every problem is a :class:`DataFormatError` naming the file. The cap on one file's bytes (after
gunzip) is ``max_bytes``, else the environment variable ``ROBUST_MRC_MAX_DATA_BYTES``, else 2 GiB;
a gzip file that inflates past it stops decompressing at the cap (memory stays bounded).
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from pathlib import Path
from typing import Any

from robust_mrc.data.errors import DataFormatError

GZIP_MAGIC = b"\x1f\x8b"
MAX_BYTES_ENV = "ROBUST_MRC_MAX_DATA_BYTES"
DEFAULT_MAX_BYTES = 2 << 30  # 2 GiB: SQuAD v1.1 train is 40 MB, RACE all splits ~100 MB
_CHUNK = 16 << 20
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)


def parse_size(value: Any, what: str = "size") -> int:
    """Bytes from an integer or a string such as ``"500MB"``, ``"2GiB"``, ``"4g"`` (powers of 1024)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    m = _SIZE.match(str(value)) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"{what}={value!r}: expected a number of bytes such as 2147483648 or 2GiB")
    size = int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2).lower() or " "))
    if size <= 0:
        raise ValueError(f"{what}={value!r}: expected a positive size")
    return size


def max_data_bytes(value: Any = None) -> int:
    """The cap on the bytes of one data file (after gunzip): ``value``, else the environment
    variable ``ROBUST_MRC_MAX_DATA_BYTES``, else 2 GiB."""
    if value not in (None, ""):
        return parse_size(value, "data.max_bytes")
    env = os.environ.get(MAX_BYTES_ENV)
    return parse_size(env, MAX_BYTES_ENV) if env else DEFAULT_MAX_BYTES


def _too_large(path: Path, cap: int, what: str) -> DataFormatError:
    return DataFormatError(
        path,
        None,
        f"file too large: {what} more than {cap:,} bytes, the cap on one data file; if the file is "
        f"genuine, raise it with +data.max_bytes=<bytes, e.g. 8GiB> or {MAX_BYTES_ENV}=<bytes>",
    )


def _read_capped(stream, cap: int, path: Path) -> bytes:
    chunks, total = [], 0
    while True:
        chunk = stream.read(min(_CHUNK, cap + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:
            raise _too_large(path, cap, "it inflates to")


def read_bytes(path: Path, max_bytes: int | None = None) -> bytes:
    """The bytes of ``path``, gunzipped (streamed) when it starts with the gzip magic bytes; a
    :class:`DataFormatError` when there are more than ``max_bytes`` (:func:`max_data_bytes`)."""
    cap = max_bytes or max_data_bytes()
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise DataFormatError(path, None, "file not found: no such file") from None
    except IsADirectoryError:
        raise DataFormatError(path, None, "is a directory: expected a file") from None
    except OSError as e:
        raise DataFormatError(path, None, f"cannot read file: {e.strerror or e}") from None
    with f:
        try:
            compressed = f.read(2) == GZIP_MAGIC
            f.seek(0)
            if not compressed:
                size = os.fstat(f.fileno()).st_size
                if size > cap:
                    raise _too_large(path, cap, f"it is {size:,} bytes,")
                return _read_capped(f, cap, path)
        except OSError as e:
            raise DataFormatError(path, None, f"cannot read file: {e.strerror or e}") from None
        try:
            with gzip.GzipFile(fileobj=f, mode="rb") as g:
                return _read_capped(g, cap, path)
        except (gzip.BadGzipFile, EOFError, zlib.error, OSError) as e:
            raise DataFormatError(path, None, f"corrupt gzip file: {e}") from None


def read_text(path: Path, max_bytes: int | None = None) -> str:
    """The decoded text of ``path`` (:func:`read_bytes`: gunzipped, capped in size)."""
    raw = read_bytes(path, max_bytes)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataFormatError(path, None, f"not UTF-8 text: undecodable byte at offset {e.start} ({e.reason})") from None
    if not text.strip():
        raise DataFormatError(path, None, "empty file: no records")
    return text
