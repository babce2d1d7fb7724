"""Distractor banks made on demand and cached on disk: what ``distractor_extraction bank=auto`` and
``distractor_generation bank=auto generator=PATH`` read, through the bank maker
:class:`DistractorBanks` that the commands and jobs hand to the attacks (an attack never builds one).

**DE** (Si et al. 2021 (AdvRACE), section 3.1): :func:`de_bank` trains the project's span extractor
on the training examples and reads the target examples with it, through
:func:`robust_mrc.banks.de.build_de_bank`, the path of ``robust-mrc banks de``. The build runs in a
child process (``python -m <worker> REQUEST``, :mod:`robust_mrc.jobs.extractor`): the extractor's
training has its own Lightning trainer, Hydra composition, seeds, environment and threads, none of
which may leak into the training or evaluation that prepares the attack (nor a DDP or SLURM
environment into the extractor's trainer). Its output goes to a log file; training and reading
progress lines are relayed to this process's log. Cached under ``<cache>/banks/de/``, where
``<cache>`` is :func:`robust_mrc.core.files.cache_root` (``$ROBUST_MRC_CACHE``, else
``~/.cache/robust_mrc``):

* ``extractor-<key>/``: the extractor's span data, its run (``train/checkpoints/best.ckpt``) and
  ``extractor.json`` once trained. Key: a digest of the training examples, the extractor settings
  and the span-data code. Trained once per training set and settings; every target set reuses it.
* ``<key>.jsonl`` (with ``.stats.json`` and the build's ``.log``): the bank. Key: the extractor's
  key, a digest of the target examples, ``top`` and the bank code (``de.py``, the DE filter).

**DG** (section 3.2): :func:`dg_bank` runs a trained generator checkpoint over the targets
(:func:`robust_mrc.banks.dg.build_dg_bank`, the beam search and selection of ``robust-mrc
banks dg``) in this process (no training: generation draws no random numbers, and the
global random state is restored after loading). Cached as ``<cache>/banks/dg/<key>.jsonl``; key:
a digest of the checkpoint file, the targets, the beams and the DG code. No generator is ever
trained here (the DG bank command trains one).

A build holds a file lock (``*.lock`` beside it): processes that need the same bank at once (DDP
ranks, parallel jobs) build it once, the others wait and then read it. The reading pass journals
what it read (``<bank>.partial.jsonl``): a build interrupted there goes on where it stopped.
A cached bank, or an extractor's record, that cannot be read is made again, with a warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from robust_mrc.banks import BankError
from robust_mrc.banks.de import DESettings
from robust_mrc.core.files import waiting_lock

log = logging.getLogger(__name__)

PACKAGE = Path(__file__).resolve().parents[1]
# what the cached files depend on besides the examples and settings
DE_TRAIN_CODE = ("banks/span_data.py",)
DE_BANK_CODE = ("banks/de.py", "attacks/mc/distractors.py")
DG_CODE = ("banks/dg.py", "attacks/mc/diverse.py")
# relayed from the build's output to this log: the training's and reading's progress lines
_PROGRESS = ("[train]", "[validate]", "[robust_mrc.banks")
# the child's environment leaves out what would make its trainer join a distributed job
_DISTRIBUTED = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT"}
_DISTRIBUTED_PREFIXES = ("SLURM_", "TORCHELASTIC_", "PL_")


@dataclass
class CachedBank:
    """A bank read from the cache: ``{id: distractors}``, its file, whether this call built it, its stats."""

    bank: dict[str, tuple[str, ...]]
    path: Path
    built: bool
    stats: dict = field(default_factory=dict)


def code_digest(files: Sequence[str]) -> str:
    """A digest of the package files ``files`` (paths under ``robust_mrc/``)."""
    h = hashlib.blake2b(digest_size=8)
    for name in files:
        h.update(name.encode() + b"\0" + (PACKAGE / name).read_bytes() + b"\0")
    return h.hexdigest()


def banks_dir(kind: str) -> Path:
    """``<cache>/banks/<kind>`` (created)."""
    from robust_mrc.attacks.resources import cache_dir

    path = cache_dir() / "banks" / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


def unique_targets(examples: Sequence) -> list:
    """``examples`` with each id once (the first kept: a bank maps ids to distractors); a warning when
    two different examples share an id."""
    seen: dict[str, object] = {}
    clashes = 0
    for ex in examples:
        if ex.id in seen:
            clashes += seen[ex.id] != ex
            continue
        seen[ex.id] = ex
    if clashes:
        log.warning("%d examples share an id with a different example: the bank is made for the first of each id", clashes)
    return list(seen.values())


def _read(path: Path) -> CachedBank:
    from robust_mrc.attacks.pools import load_bank

    stats_path = path.with_name(path.name + ".stats.json")
    stats = json.loads(stats_path.read_text()) if stats_path.is_file() else {}
    return CachedBank(load_bank(str(path)), path, False, stats)


def _read_cached(path: Path, label: str, warn: bool = True) -> CachedBank | None:
    """The cached bank ``path``, or None when it is not there or cannot be read (a damaged file,
    with a warning when ``warn``: it is made again)."""
    from robust_mrc.attacks.pools import BankFileError

    if not path.is_file():
        return None
    try:
        return _read(path)
    except (BankFileError, ValueError) as err:
        if warn:
            log.warning("%s: the cached bank %s cannot be read (%s): it is made again", label, path, err)
        return None


def _read_or_build(out: Path, lock: Path, build: Callable[[], None], kind: str, label: str) -> CachedBank:
    """The bank ``out``: read from the cache, else ``build()`` under the lock ``lock`` (a process that
    waited on the lock finds it built and reads it) and read. A cached bank that cannot be read is
    built again."""
    cached = _read_cached(out, label)
    if cached is None:
        with waiting_lock(lock):
            cached = _read_cached(out, label, warn=False)  # else another process built it while this one waited
            if cached is None:
                build()
                cached = _read(out)
                cached.built = True
                return cached
    log.info("%s: %s bank from the cache %s (%d questions)", label, kind, out, len(cached.bank))
    return cached


# ----------------------------------------------------------------------------- DE


def de_keys(train_examples: Sequence, targets: Sequence, settings: DESettings) -> tuple[str, str]:
    """``(extractor key, bank key)`` of a DE bank (see the module doc)."""
    from robust_mrc.core.digests import fingerprint
    from robust_mrc.data.examples import examples_digest

    train_key = fingerprint(
        "de-extractor", examples_digest(train_examples), list(settings.overrides), settings.seed, code_digest(DE_TRAIN_CODE)
    )
    bank_key = fingerprint("de-bank", train_key, examples_digest(targets), settings.top, code_digest(DE_BANK_CODE))
    return train_key, bank_key


def de_bank(
    train_examples: Sequence, targets: Sequence, settings: DESettings, worker: str, label: str = "distractor_extraction"
) -> CachedBank:
    """The DE bank of ``targets`` by an extractor trained on ``train_examples`` with ``settings``:
    read from the cache, else built (once, under a lock) in a child process ``python -m <worker>``
    and cached. ``label`` names the caller in the log lines."""
    targets = unique_targets(targets)
    train_key, bank_key = de_keys(train_examples, targets, settings)
    root = banks_dir("de")
    out = root / f"{bank_key}.jsonl"

    def build() -> None:
        _build_de(list(train_examples), targets, settings, root / f"extractor-{train_key}", out, worker, label)

    return _read_or_build(out, root / f"extractor-{train_key}.lock", build, "DE", label)


def _build_de(train: list, targets: list, settings: DESettings, extractor_dir: Path, out: Path, worker: str, label: str) -> None:
    """Run the DE build in a child process (see the module doc); raise :class:`BankError` if it fails."""
    import torch

    from robust_mrc.data.examples import example_to_dict

    extractor_dir.mkdir(parents=True, exist_ok=True)
    record = extractor_dir / "extractor.json"
    ckpt = _recorded_ckpt(record)
    if ckpt and not Path(ckpt).is_file():
        ckpt = None
    if ckpt is None:
        shutil.rmtree(extractor_dir / "train", ignore_errors=True)  # what an interrupted training left
    request_dir = out.with_name(out.stem + ".request")
    request_dir.mkdir(parents=True, exist_ok=True)
    files = {"targets": targets} if ckpt else {"train": train, "targets": targets}
    for name, examples in files.items():
        with open(request_dir / f"{name}.jsonl", "w", encoding="utf-8") as fh:
            for ex in examples:
                fh.write(json.dumps(example_to_dict(ex), ensure_ascii=False) + "\n")
    device = ("trainer=gpu",) if torch.cuda.is_available() else ("trainer=cpu",)
    request = {
        "settings": asdict(settings),
        "device": list(device),
        "train": str(request_dir / "train.jsonl") if not ckpt else None,
        "targets": str(request_dir / "targets.jsonl"),
        "ckpt": ckpt,
        "work_dir": str(extractor_dir),
        "record": str(record),
        "out": str(out),
    }
    (request_dir / "request.json").write_text(json.dumps(request, indent=1))
    log_path = out.with_name(out.stem + ".log")
    what = (
        f"reading {len(targets)} questions with the cached extractor {ckpt}"
        if ckpt
        else (f"training the span extractor ({', '.join(settings.overrides)}) on {len(train)} questions, then reading {len(targets)}")
    )
    log.info("%s: building the DE bank (Si et al. 2021 (AdvRACE)): %s; cached as %s (build log %s)", label, what, out, log_path)
    began = time.perf_counter()
    rc = _run_child([sys.executable, "-m", worker, str(request_dir / "request.json")], log_path, label)
    if (rc != 0 or not out.is_file()) and ckpt:  # the cached extractor could not be used (damaged?): trained again, once
        log.warning("%s: the cached span extractor %s could not be used (build log %s): it is trained again", label, ckpt, log_path)
        record.unlink(missing_ok=True)
        shutil.rmtree(request_dir, ignore_errors=True)
        return _build_de(train, targets, settings, extractor_dir, out, worker, label)
    if rc != 0 or not out.is_file():
        lines = [line.strip() for line in log_path.read_text(errors="replace").splitlines() if line.strip()] if log_path.is_file() else []
        raise BankError(
            f"{label}: building the DE bank failed (exit status {rc}): {lines[-1] if lines else 'no output'} (whole log: {log_path}); "
            "bank=none runs the model-free stand-in de_lexical instead"
        )
    shutil.rmtree(request_dir, ignore_errors=True)
    stats = json.loads(out.with_name(out.name + ".stats.json").read_text())
    covered = stats.get("all", {}).get("covered")
    log.info(
        "%s: DE bank built in %.1f s: %s of %d questions with new distractors; cached as %s",
        label,
        time.perf_counter() - began,
        covered,
        len(targets),
        out,
    )


def _recorded_ckpt(record: Path) -> str | None:
    """The extractor checkpoint a finished training recorded in ``record``; None when there is no
    record or it cannot be read (the extractor is trained again)."""
    try:
        ckpt = json.loads(record.read_text(encoding="utf-8")).get("ckpt") if record.is_file() else None
    except (ValueError, AttributeError):
        log.warning("the extractor record %s cannot be read: the span extractor is trained again", record)
        return None
    return str(ckpt) if ckpt else None


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DISTRIBUTED and not k.startswith(_DISTRIBUTED_PREFIXES)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE.parent), env.get("PYTHONPATH")) if p)
    return env


def _run_child(cmd: list[str], log_path: Path, label: str) -> int:
    """Run ``cmd``, its output into ``log_path``, progress lines relayed to the log; its exit status."""
    with open(log_path, "w", encoding="utf-8") as fh:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_child_env(), cwd=str(log_path.parent)
        )
        try:
            for line in proc.stdout:
                fh.write(line)
                fh.flush()
                if line.startswith(_PROGRESS):
                    log.info("%s: DE bank build: %s", label, line.rstrip())
            return proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise


# ----------------------------------------------------------------------------- DG


@contextlib.contextmanager
def kept_random_state() -> Iterator[None]:
    """Restore Python's, NumPy's and torch's (CPU) global random state on exit."""
    import random

    import numpy as np
    import torch

    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])


def dg_bank(
    generator: str | Path, targets: Sequence, beams: int = 50, batch_size: int = 8, label: str = "distractor_generation"
) -> CachedBank:
    """The DG bank of ``targets`` by the generator checkpoint ``generator``: read from the cache,
    else generated (once, under a lock) and cached."""
    from robust_mrc.attacks.pools import write_bank
    from robust_mrc.banks.dg import build_dg_bank
    from robust_mrc.banks.stats import bank_stats
    from robust_mrc.core.digests import fingerprint
    from robust_mrc.core.files import file_digest
    from robust_mrc.core.journal import Journal
    from robust_mrc.data.examples import examples_digest
    from robust_mrc.data.writers import atomic_write_json

    generator = Path(generator)
    if not generator.is_file():
        raise BankError(f"{label}: generator={generator}: no such checkpoint file (a task=dg checkpoint: robust-mrc banks dg)")
    targets = unique_targets(targets)
    key = fingerprint("dg-bank", file_digest(generator), examples_digest(targets), int(beams), code_digest(DG_CODE))
    root = banks_dir("dg")
    out = root / f"{key}.jsonl"

    def build() -> None:
        log.info(
            "%s: building the DG bank (Si et al. 2021 (AdvRACE)): generator %s, %d beams, %d questions; cached as %s",
            label,
            generator,
            beams,
            len(targets),
            out,
        )
        began = time.perf_counter()
        journal = Journal(out.with_name(out.name + ".partial.jsonl"), {"bank": out.name})
        with kept_random_state():
            bank, distinct = build_dg_bank(generator, targets, beams=beams, batch_size=batch_size, journal=journal)
        stats = {
            "bank": str(out),
            "generator": str(generator.resolve()),
            "beams": int(beams),
            "all": bank_stats(bank, targets),
            "distinct_beams_mean": round(sum(distinct) / max(1, len(distinct)), 2),
            "seconds": round(time.perf_counter() - began, 1),
        }
        atomic_write_json(out.with_name(out.name + ".stats.json"), stats)
        write_bank(bank, out)
        journal.finish()
        log.info("%s: DG bank built in %.1f s; cached as %s", label, stats["seconds"], out)

    return _read_or_build(out, root / f"{key}.lock", build, "DG", label)


# ----------------------------------------------------------------------------- the bank maker


@dataclass(frozen=True)
class DistractorBanks:
    """The bank maker the attacks get in their context (:class:`robust_mrc.attacks.base.BankMaker`):
    the DE and DG banks of ``bank: auto``, read from the cache or built and cached. ``worker``: the
    module run as ``python -m <worker> REQUEST`` to build a DE bank in a child process
    (:mod:`robust_mrc.jobs.extractor`, which trains the extractor as a training job)."""

    worker: str

    def de_bank(
        self,
        train_examples: Sequence,
        targets: Sequence,
        *,
        extractor: str,
        epochs: int,
        max_length: int,
        batch_size: int,
        top: int,
        label: str,
    ) -> CachedBank:
        from robust_mrc.config import CONFIG_DIR

        if not (CONFIG_DIR / "model" / f"{extractor}.yaml").is_file():
            raise BankError(
                f"{label}: extractor={extractor!r} is no model config of robust_mrc/conf/model (e.g. minilm, tiny, roberta; "
                "auto: minilm, tiny on small data)"
            )
        settings = DESettings.for_extractor(extractor, epochs, max_length, batch_size, top=top, name="auto")
        return de_bank(train_examples, targets, settings, self.worker, label=label)

    def dg_bank(self, generator: str | Path, targets: Sequence, *, beams: int, batch_size: int, label: str) -> CachedBank:
        return dg_bank(generator, targets, beams=beams, batch_size=batch_size, label=label)
