"""On-disk cache of attacked sets and predictions, keyed by fingerprints.

A fingerprint is a BLAKE2b digest of everything a result depends on (the clean examples, the
attack and its parameters, the seed, files the parameters name, the checkpoint), so a cached
entry is reused only when it would be made again identically. Entries are written atomically
(temporary file + rename): an interrupted evaluation leaves whole entries or none, and the next
run reuses what was finished.

Layout under ``cache_dir``::

    sets/<set name>-<fingerprint>.jsonl.gz      attacked examples, one JSON object a line
    predictions/<fingerprint>.json              {example id: prediction record}
    scores/<fingerprint>.npy                    magnet screening scores
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import logging
import os
from pathlib import Path
from typing import Any, Iterable

from robust_mrc.data.examples import Answer, Edit, MCExample, SpanExample
from robust_mrc.data.writers import atomic_write_bytes

log = logging.getLogger(__name__)

CACHE_VERSION = 1  # bump when the meaning of a cached entry changes


def _digest(data: bytes, size: int = 12) -> str:
    return hashlib.blake2b(data, digest_size=size).hexdigest()


def file_digest(path: str | Path) -> str:
    """Digest of a file's bytes (streamed)."""
    h = hashlib.blake2b(digest_size=12)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _canonical(obj: Any) -> Any:
    """JSON-able form of config values; a string naming an existing file stands for its content."""
    if isinstance(obj, dict) or hasattr(obj, "items"):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, str) and len(obj) < 4096 and ("/" in obj or "." in obj):
        try:
            if Path(obj).is_file():
                return {"file_digest": file_digest(obj)}  # content, not where it lies
        except OSError:
            pass
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return repr(obj)


def fingerprint(*parts: Any) -> str:
    """A short stable digest of ``parts`` (config values, digests, names)."""
    text = json.dumps([CACHE_VERSION, *(_canonical(p) for p in parts)], sort_keys=True, ensure_ascii=False)
    return _digest(text.encode("utf-8"))


# ----------------------------------------------------------------------------- examples
def example_to_dict(ex: MCExample | SpanExample) -> dict:
    d = dataclasses.asdict(ex)
    d["type"] = "mc" if isinstance(ex, MCExample) else "span"
    return d


def example_from_dict(d: dict) -> MCExample | SpanExample:
    d = dict(d)
    kind = d.pop("type")
    edits = tuple(Edit(**e) for e in d.pop("edits", ()))
    if kind == "mc":
        return MCExample(**d, edits=edits)
    answers = tuple(Answer(**a) for a in d.pop("answers"))
    return SpanExample(**d, answers=answers, edits=edits)


def examples_digest(examples: Iterable[MCExample | SpanExample]) -> str:
    h = hashlib.blake2b(digest_size=12)
    for ex in examples:
        h.update(json.dumps(example_to_dict(ex), sort_keys=True, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


class DiskCache:
    """Attacked sets, prediction records and score arrays under one directory (``None``: off)."""

    def __init__(self, root: str | Path | None):
        self.root = Path(root).expanduser() if root else None

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def _path(self, kind: str, name: str) -> Path | None:
        return None if self.root is None else self.root / kind / name

    # examples
    def load_examples(self, name: str, key: str) -> list | None:
        path = self._path("sets", f"{name}-{key}.jsonl.gz")
        if path is None or not path.is_file():
            return None
        try:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                return [example_from_dict(json.loads(line)) for line in f if line.strip()]
        except (OSError, ValueError, KeyError, TypeError) as err:  # a damaged entry is remade
            log.warning("cache entry %s unreadable (%s): remaking it", path, err)
            return None

    def save_examples(self, name: str, key: str, examples: list) -> None:
        path = self._path("sets", f"{name}-{key}.jsonl.gz")
        if path is None:
            return
        text = "".join(json.dumps(example_to_dict(ex), ensure_ascii=False) + "\n" for ex in examples)
        atomic_write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))

    # JSON (prediction records)
    def load_json(self, kind: str, key: str) -> Any | None:
        path = self._path(kind, f"{key}.json")
        if path is None or not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            log.warning("cache entry %s unreadable (%s): remaking it", path, err)
            return None

    def save_json(self, kind: str, key: str, obj: Any) -> None:
        path = self._path(kind, f"{key}.json")
        if path is not None:
            atomic_write_bytes(path, json.dumps(obj, ensure_ascii=False).encode("utf-8"))

    # numpy arrays (screening scores)
    def load_array(self, kind: str, key: str):
        import numpy as np

        path = self._path(kind, f"{key}.npy")
        if path is None or not path.is_file():
            return None
        try:
            return np.load(path, allow_pickle=False)
        except (OSError, ValueError) as err:
            log.warning("cache entry %s unreadable (%s): remaking it", path, err)
            return None

    def save_array(self, kind: str, key: str, array) -> None:
        import numpy as np

        path = self._path(kind, f"{key}.npy")
        if path is None:
            return
        buf = io.BytesIO()
        np.save(buf, array, allow_pickle=False)
        atomic_write_bytes(path, buf.getvalue())


def checkpoint_key(ckpt_path: str | Path) -> str:
    """Identity of a checkpoint file for caching predictions: resolved path, size, mtime."""
    st = os.stat(ckpt_path)
    return fingerprint("ckpt", str(Path(ckpt_path).resolve()), st.st_size, st.st_mtime_ns)
