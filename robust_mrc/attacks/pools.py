"""Option pools (magnet, extra_option, model-free DG) and distractor banks (DE / DG from a model).

A pool is a list of candidate options, each with where it came from (question, example id and a
fingerprint of its passage), so that an attack never takes an option from the same passage or one
identical to an option of the question it attacks. Build one from examples, from any data file the
readers can load, or from a plain text file (one option a line) / JSONL (``{"option": ...}``).

A distractor bank maps an example id to new distractors: JSONL lines
``{"id": ..., "distractors": [...]}`` or a JSON object ``{id: [...]}``; :func:`write_bank` writes
the JSONL layout.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import normalize
from robust_mrc.data.writers import atomic_write_text


def passage_key(passage: str) -> str:
    return hashlib.blake2b(" ".join(passage.split()).encode(), digest_size=8).hexdigest()


@dataclass(frozen=True)
class PoolEntry:
    option: str
    question: str = ""
    source_id: str = ""
    passage: str = ""  # passage_key of the source passage ("" when unknown)


class OptionPool:
    """Candidate options in a fixed order (the order of the source; duplicates dropped)."""

    def __init__(self, entries: Iterable[PoolEntry]):
        seen, kept = set(), []
        for e in entries:
            key = (normalize(e.option), e.passage)
            if not normalize(e.option) or key in seen:
                continue
            seen.add(key)
            kept.append(e)
        self.entries: list[PoolEntry] = kept

    def __len__(self) -> int:
        return len(self.entries)

    @classmethod
    def from_examples(cls, examples: Iterable[MCExample], wrong_only: bool = False) -> OptionPool:
        entries = []
        for ex in examples:
            key = passage_key(ex.passage)
            for i, opt in enumerate(ex.options):
                if wrong_only and i == ex.label:
                    continue
                entries.append(PoolEntry(opt, ex.question, ex.id, key))
        return cls(entries)

    @classmethod
    def from_strings(cls, options: Iterable[str]) -> OptionPool:
        return cls(PoolEntry(str(o)) for o in options)

    @classmethod
    def from_file(cls, path: str | Path) -> OptionPool:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"option pool {path} does not exist")
        if path.suffix == ".txt":
            return cls.from_strings(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        if path.suffix == ".jsonl":
            first = next((line for line in path.open(encoding="utf-8") if line.strip()), "")
            try:
                rec = json.loads(first)
            except json.JSONDecodeError:
                rec = {}
            if isinstance(rec, dict) and ("option" in rec or "text" in rec) and "options" not in rec:
                opts = []
                for line in path.open(encoding="utf-8"):
                    if line.strip():
                        r = json.loads(line)
                        opts.append(r.get("option", r.get("text", "")))
                return cls.from_strings(opts)
        from robust_mrc.data.readers import load_examples

        examples = [e for e in load_examples(path) if isinstance(e, MCExample)]
        return cls.from_examples(examples)


_POOL_CACHE: dict[str, OptionPool] = {}


def describe_source(source) -> str:
    """A pool or bank for an attack's resources: a file with the digest of its bytes, a path that
    names no file as it is, anything else as what was given in memory and its size."""
    if isinstance(source, (str, Path)):
        if Path(source).is_file():
            from robust_mrc.core.files import file_digest

            return f"{source} ({file_digest(source)})"
        return str(source)
    return f"given in memory ({type(source).__name__} of {len(source)})"


def describe_pool(pool, pool_examples: Iterable | None, drawn: str = "options of the context's {n} examples") -> str:
    """What :func:`pool_for` draws from, for an attack's resources: ``pool`` (:func:`describe_source`),
    else the examples beside the attack (``drawn``, ``{n}`` their number), else "none"."""
    if pool is not None:
        return describe_source(pool)
    if pool_examples is not None:
        return drawn.format(n=len(list(pool_examples)))
    return "none"


def pool_for(pool, pool_examples: Iterable[MCExample] | None) -> OptionPool | None:
    """The pool an attack draws from: its ``pool=`` parameter (a file, a list, an
    :class:`OptionPool`), else the options of ``pool_examples`` (the training set, or the input of
    the attacks command), else None."""
    resolved = resolve_pool(pool)
    if resolved is None and pool_examples is not None:
        resolved = OptionPool.from_examples(pool_examples)
    return resolved


def resolve_pool(pool) -> OptionPool | None:
    """An :class:`OptionPool` from a pool, a path, a list of examples or a list of strings."""
    if pool is None or isinstance(pool, OptionPool):
        return pool
    if isinstance(pool, (str, Path)):
        key = str(Path(pool).resolve())
        if key not in _POOL_CACHE:
            _POOL_CACHE[key] = OptionPool.from_file(pool)
        return _POOL_CACHE[key]
    items = list(pool)
    if all(isinstance(x, MCExample) for x in items):
        return OptionPool.from_examples(items)
    if all(isinstance(x, str) for x in items):
        return OptionPool.from_strings(items)
    raise TypeError("pool must be an OptionPool, a file path, a list of MCExample or a list of strings")


_BANK_CACHE: dict[str, dict[str, tuple[str, ...]]] = {}


def load_bank(bank) -> dict[str, tuple[str, ...]] | None:
    """A distractor bank ``{example id: distractors}`` from a dict or a JSON / JSONL file."""
    if bank is None:
        return None
    if isinstance(bank, dict):
        return {str(k): tuple(v) for k, v in bank.items()}
    key = str(Path(bank).resolve())
    if key in _BANK_CACHE:
        return _BANK_CACHE[key]
    path = Path(bank)
    if not path.is_file():
        raise FileNotFoundError(f"distractor bank {path} does not exist")
    text = path.read_text(encoding="utf-8")
    out: dict[str, tuple[str, ...]] = {}
    stripped = text.lstrip()
    if stripped.startswith("{") and path.suffix == ".json":
        data = json.loads(text)
        out = {str(k): tuple(v) for k, v in data.items()}
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if "id" not in rec or "distractors" not in rec:
                raise ValueError(f"{path}, line {n}: a bank record needs 'id' and 'distractors'")
            out[str(rec["id"])] = tuple(rec["distractors"])
    _BANK_CACHE[key] = out
    return out


def write_bank(bank: dict[str, Iterable[str]], path: str | Path) -> Path:
    """Write ``bank`` (``{example id: distractors}``, in its order) as JSONL lines
    ``{"id": ..., "distractors": [...]}``, atomically; :func:`load_bank` reads it back equal."""
    lines = [json.dumps({"id": str(k), "distractors": [str(d) for d in v]}, ensure_ascii=False) + "\n" for k, v in bank.items()]
    atomic_write_text(path, "".join(lines))
    _BANK_CACHE.pop(str(Path(path).resolve()), None)
    return Path(path)
