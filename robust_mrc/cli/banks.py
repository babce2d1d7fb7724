"""``robust-mrc banks de|dg``: the Distractor Extraction and Distractor Generation banks of Si et
al. 2021 (AdvRACE) made by the project's own models, written as bank files (the library:
:mod:`robust_mrc.banks`).

**banks de**: the Distractor Extraction (DE) bank of Si et al. 2021 (AdvRACE), section 3.1, made
by the project's own span model, end to end:

    robust-mrc banks de data=dream_local out=banks/dream_de.jsonl [model=minilm]
        [trainer.max_epochs=2] [batch_size=8] [seed=42] [splits=train,validation,test]
        [ckpt=PATH] [top=20] [work_dir=PATH] [stats=PATH] [KEY=VALUE ...]

1. The training split of the multiple-choice ``data`` config becomes span QA: each correct option
   inserted at a random word position of its passage (``robust_mrc.banks.span_data``, hashed per
   example from ``seed``), written as SQuAD v1.1 files in ``work_dir/span_data/`` (train and,
   when the data has one, validation; else 10 % of the passages of train are held out).
2. The span module is trained on it by :func:`robust_mrc.jobs.extractor.train_extractor` (``robust_mrc.jobs.train.train``, (``task=span
   data=squad_local``), the other ``KEY=VALUE`` arguments as for ``train.py``: ``model=``,
   ``trainer.*``, ``batch_size``, ``task.max_length``, ...), run directory ``work_dir/train``
   unless ``output_dir=`` is given. ``ckpt=PATH`` skips steps 1-2 and uses that span checkpoint.
3. The checkpoint reads every question of ``splits`` (default: every split of the data config)
   with its unmodified passage; its ``top`` (20) best spans over all windows, less those that
   cross a line break or end on a dangling word (``fragment``: "she's really a"), are walked in
   rank order (white space collapsed, leading punctuation and a speaker's tag "W:" dropped:
   :func:`robust_mrc.banks.de.span_text`) through the DE rules
   (:func:`robust_mrc.attacks.mc.distractors.filter_spans`, shared with the model-free stand-in
   ``de_lexical``) and the first ``n_options - 1`` kept.
   The n-best lists read are journaled in ``<out>.partial.jsonl`` (:mod:`robust_mrc.core.journal`):
   after a crash or preemption in this pass, the same command with ``ckpt=`` the extractor's
   checkpoint (``WORK_DIR/train/checkpoints/best.ckpt``) reads only the questions left.
4. The bank ``out`` (JSONL ``{"id", "distractors"}``, every question, possibly with fewer
   distractors than wrong options: ``distractor_extraction bank=`` backfills with the original
   ones, and leaves a question with none as it is) and ``out.stats.json`` (or ``stats=``):
   :func:`robust_mrc.banks.stats.bank_stats` per split and over all, the filter's drop counts,
   the extractor's checkpoint and validation scores. Both written atomically.

``banks de`` runs under ``@hydra.main`` with ``robust_mrc/conf/bank_de.yaml`` (``robust_mrc/conf/config.yaml`` with
``task=span``, the bank's own keys ``out``, ``stats``, ``ckpt``, ``splits``, ``top``, ``work_dir``
and their defaults; ``--help``, ``--cfg job``). ``data=`` and ``data.*`` (``data.limit=...``)
configure the multiple-choice data; the command line's other overrides configure the extractor's
training (:func:`training_overrides`). ``work_dir`` defaults to ``out`` without its suffix plus
``.work``; ``splits=train,test`` is read as ``splits=[train,test]``. A mistake prints one line
``Error: ...``; the files it writes (``out``, ``stats``, ``work_dir`` when it trains) are checked
before any work: neither an input nor a directory, and writable.

Steps 1-3 are :func:`robust_mrc.banks.de.build_de_bank` (training examples, target examples,
:class:`~robust_mrc.banks.de.DESettings`): the command and ``distractor_extraction bank=auto``
(:mod:`robust_mrc.banks.auto`, which caches the bank) take the same path.

**banks dg**: a Distractor Generation bank made by the project's own generator:

    robust-mrc banks dg data=dream_local out=banks/dream_dg.jsonl [ckpt=PATH] [model=minilm] [beams=50]

A Distractor Generation bank made by the project's own generator (the DG of Si et al. 2021
(AdvRACE), section 3.2):

1. the generator: ``ckpt=`` (a ``task=dg`` checkpoint, loaded weights-only through
   :func:`robust_mrc.models.checkpoints.load_checkpoint`), else one trained here by
   :func:`robust_mrc.jobs.train.train` with ``task=dg`` (every ``train.py`` key applies);
2. for every question of ``splits``: beam search with ``beams`` beams (50), at most
   ``task.max_new_tokens`` (20) new tokens, no repeated unigrams (``task.no_repeat_ngram_size=1``),
   all beams returned, best first; uncased output is re-cased from the question's own text;
3. :func:`robust_mrc.attacks.mc.diverse.select_diverse` keeps beam 1, then later beams whose
   token-set Jaccard similarity to every kept one is below ``max_similarity`` (0.5), falls back to
   beams 2, 3, ..., never the correct answer or a duplicate (normalised); ``n`` = the question's
   number of wrong options;
4. the bank (JSONL, ``{"id": ..., "distractors": [...]}``: what
   :func:`robust_mrc.attacks.pools.load_bank` reads) and its statistics (``<out>.stats.json``),
   both written atomically; both checked writable before the generator is trained or loaded.

Each batch of finished questions is appended to ``<out>.partial.jsonl``
(:mod:`robust_mrc.core.journal`): the same command run again after a crash or preemption goes on
with the questions not yet done (same checkpoint file and settings; else it starts afresh). With
training, ``output_dir=DIR ckpt_path=last_or_new`` makes the training part resume too.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig

from robust_mrc.attacks.pools import write_bank
from robust_mrc.banks import BankError
from robust_mrc.banks.de import DESettings, build_de_bank, span_training_config
from robust_mrc.banks.dg import generate_bank, load_generator_checkpoint
from robust_mrc.banks.stats import bank_stats, collapse_warning, format_stats
from robust_mrc.cli.common import hydra_command, run_command
from robust_mrc.config.checks import ConfigError, check_config
from robust_mrc.core import settings as S
from robust_mrc.core.journal import Journal, file_identity
from robust_mrc.data.examples import MCExample
from robust_mrc.data.sources import SPLITS
from robust_mrc.data.writers import OutputWriteError, atomic_write_text, check_writable, output_path_problem

log = logging.getLogger(__name__)

COMMANDS = {"de": "a DE bank: passage spans of a span extractor trained here", "dg": "a DG bank: what a trained generator makes"}


def main(argv: Sequence[str]) -> int:
    """``robust-mrc banks de|dg KEY=VALUE ...``."""
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print("usage: robust-mrc banks {de,dg} KEY=VALUE ... (--help after the command: its keys)")
        for name, what in COMMANDS.items():
            print(f"  {name}  {what}")
        return 0
    logging.basicConfig(level=logging.INFO, format="[%(name)s] %(message)s")
    if argv[0] == "de":
        return de_main(argv[1:])
    if argv[0] == "dg":
        return dg_main(argv[1:])
    return run_command(_unknown, argv[0])


def _unknown(command: str) -> int:
    raise ConfigError(f"unknown bank command {command!r}; use `de` or `dg`")


def parse_splits(value: str | Sequence[str] | None, available: dict[str, list]) -> list[str]:
    """The splits of ``splits=[train,test]`` (a list), ``splits=test`` or ``"train,test"``; None:
    every split with examples."""
    if value in (None, "", "null"):
        return [s for s in SPLITS if available.get(s)]
    names = [s.strip() for s in value.strip("[]").split(",")] if isinstance(value, str) else [str(s).strip() for s in value]
    names = [s for s in names if s]
    spelled = value if isinstance(value, str) else ",".join(str(s) for s in value)
    unknown = [s for s in names if s not in SPLITS]
    if unknown or not names:
        raise BankError(f"splits={spelled}: expected a comma-separated list of {', '.join(SPLITS)}")
    empty = [s for s in names if not available.get(s)]
    if empty:
        raise BankError(f"splits={spelled}: the data config has no examples in {', '.join(empty)}")
    return names


# ----------------------------------------------------------------------------- DE


def _examples(splits: dict[str, list], names: list[str]) -> list[MCExample]:
    seen: dict[str, str] = {}
    out = []
    for split in names:
        for ex in splits[split]:
            if ex.id in seen:
                raise BankError(
                    f"example id {ex.id!r} is in both {seen[ex.id]} and {split}: a bank needs ids "
                    "unique over the splits it covers (choose splits=)"
                )
            seen[ex.id] = split
            out.append(ex)
    return out


def _check_out(out: str, stats: Path, inputs: list, work_dir: Path | None) -> None:
    """The files the command writes (``out``, ``stats``, and the extractor's ``work_dir`` when it
    trains one), checked before any work: not an input, not a directory, writable."""
    from robust_mrc.data.writers import check_writable, output_path_problem

    if Path(out).expanduser().resolve() == stats.expanduser().resolve():
        raise BankError(f"stats={stats} is the bank file out={out}: give another file name")
    for path in (out, stats):
        if problem := output_path_problem(path, inputs):
            raise BankError(problem)
    for path in (out, stats, *([work_dir / "span_data" / "train.json"] if work_dir is not None else [])):
        check_writable(path)


def _top(value) -> int:
    try:
        top = int(value)
    except (TypeError, ValueError):
        top = 0
    if top < 1:
        raise BankError(f"top={value}: expected a positive whole number (the n-best spans walked, 20 in the paper)")
    return top


def own_keys() -> tuple[str, ...]:
    """The bank builder's own keys: those ``robust_mrc/conf/bank_de.yaml`` adds to ``robust_mrc/conf/config.yaml``."""
    return tuple(S.defaults(S.BankDESettings))


def training_overrides(overrides: Sequence[str]) -> list[str]:
    """The command line's overrides that configure the span extractor's training (``train.py`` keys:
    ``model=``, ``trainer.*``, ``batch_size``, ``seed``, ``paths.*``, ...): all but the bank's own
    keys and the multiple-choice data's (``data=``, ``data.*``). ``task=`` is refused: the builder
    sets it."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    own = own_keys()
    training = []
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key = override.key_or_group
        if key == "task":
            raise BankError(f"{override.input_line}: the bank builder sets the task itself (mc data, span or generation model)")
        if key not in own and key.split(".", 1)[0] != "data":
            training.append(str(override.input_line))
    return training


def build_de(cfg: DictConfig, overrides: Sequence[str] = ()) -> dict:
    """Run the DE bank's steps (the module doc) for ``cfg`` (``robust_mrc/conf/bank_de.yaml`` composed) and the command line's
    ``overrides`` (what it changed: :func:`training_overrides` configure the extractor); return the
    statistics."""
    from robust_mrc.attacks.pools import write_bank
    from robust_mrc.data.sources import load_splits
    from robust_mrc.data.writers import atomic_write_json
    from robust_mrc.jobs.extractor import train_extractor

    training = training_overrides(overrides)
    if not cfg.out:
        raise BankError("out=PATH is required: the bank file to write (e.g. out=banks/dream_de.jsonl)")
    out = Path(str(cfg.out))
    stats_path = Path(str(cfg.stats) if cfg.stats else f"{out}.stats.json")
    work_dir = Path(str(cfg.work_dir)) if cfg.work_dir else out.with_suffix(".work")
    top = _top(cfg.top)
    ckpt = str(cfg.ckpt) if cfg.ckpt else None
    if ckpt and not Path(ckpt).is_file():
        raise BankError(f"ckpt={ckpt}: no such checkpoint file (a span checkpoint, e.g. WORK_DIR/train/checkpoints/best.ckpt)")
    inputs = [cfg.data.get(split) for split in ("train", "validation", "test")]
    _check_out(str(cfg.out), stats_path, inputs, None if ckpt else work_dir)
    span_training_config(training)  # a mistake in it shows before any work
    if cfg.data.get("task") not in (None, "mc"):
        raise BankError(
            f"data={cfg.data.name} is a {cfg.data.task!r} data set: a DE bank is made for "
            "multiple-choice data (e.g. data=dream_local, data=race_local, data=synthetic_mc)"
        )
    seed = int(cfg.seed)
    splits = load_splits(cfg.data, "mc", seed)
    names = parse_splits(cfg.splits, splits)
    examples = _examples(splits, names)
    if not ckpt and not splits.get("train"):
        raise BankError(f"data={cfg.data.name} has no train split to train the span extractor on; give ckpt=PATH")
    settings = DESettings(tuple(training), seed, top, str(cfg.data.name))
    report: dict = {}
    bank = build_de_bank(
        splits.get("train"),
        examples,
        settings,
        work_dir=work_dir,
        validation=splits.get("validation"),
        ckpt=ckpt,
        journal_path=out.with_name(out.name + ".partial.jsonl"),
        journal_settings={"data": str(cfg.data.name), "splits": names, "ids": len(examples)},
        report=report,
        train_extractor=train_extractor,
    )
    write_bank(bank, out)
    report["journal"].finish()
    sizes = report["nbest_sizes"]
    stats = {
        "bank": str(out),
        "data": str(cfg.data.name),
        "seed": seed,
        "top": top,
        "extractor": {"ckpt": report["ckpt"], **report["extractor"]},
        "all": bank_stats(bank, examples),
        "splits": {s: bank_stats(bank, splits[s]) for s in names},
        "filter": {"mean_nbest": round(sum(sizes) / max(len(sizes), 1), 2), "dropped": dict(sorted(report["dropped"].items()))},
    }
    atomic_write_json(stats_path, stats)
    for s in names:
        print(format_stats(stats["splits"][s], s))
    if warning := collapse_warning(stats["all"]):
        log.warning(warning)
    print(f"bank {out} ({len(bank)} questions), statistics {stats_path}")
    return stats


def _as_list(arg: str) -> str:
    """``splits=train,test`` (a comma list, which Hydra reads as a sweep) as ``splits=[train,test]``."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ValueType
    from hydra.errors import HydraException

    if arg.startswith("-"):
        return arg  # a flag of Hydra's: --help, --cfg job, ...
    try:
        override = OverridesParser.create().parse_override(arg)
    except HydraException:
        return arg  # not an override: Hydra names the problem
    if override.key_or_group == "splits" and override.value_type == ValueType.SIMPLE_CHOICE_SWEEP:
        return f"{override.get_key_element()}=[{','.join(override.sweep_string_iterator())}]"
    return arg


def _build_de_under_hydra(cfg: DictConfig) -> dict:
    from hydra.core.hydra_config import HydraConfig

    return build_de(cfg, list(HydraConfig.get().overrides.task))


def de_main(argv: Sequence[str]) -> int:
    """``robust-mrc banks de KEY=VALUE ...`` (``--help``: the keys of ``robust_mrc/conf/bank_de.yaml``)."""
    argv = ["--help" if a == "help" else _as_list(a) for a in argv]
    run_command(hydra_command, _build_de_under_hydra, "bank_de", argv)
    return 0


# ----------------------------------------------------------------------------- DG


def _check_dg(cfg: DictConfig) -> None:
    """The bank keys of ``cfg``, before any work (then the train keys: :func:`check_config`)."""
    problems = []
    if not cfg.out:
        problems.append("out= is required: the bank file to write, e.g. out=banks/dream_dg.jsonl")
    else:
        inputs = [cfg.data.get(s) for s in SPLITS] if cfg.data.source == "local" else []
        problem = output_path_problem(cfg.out, [str(p) for p in inputs if p])
        if problem:
            problems.append(problem)
        else:
            problems += _unwritable([cfg.out, _dg_stats_path(cfg)])
    for key, low in (("beams", 1), ("gen_batch_size", 1)):
        if not isinstance(cfg[key], int) or cfg[key] < low:
            problems.append(f"{key}={cfg[key]!r}: expected an integer >= {low}")
    if cfg.n is not None and (not isinstance(cfg.n, int) or cfg.n < 1):
        problems.append(f"n={cfg.n!r}: expected an integer >= 1 or null (the question's number of wrong options)")
    sim = cfg.max_similarity
    if not isinstance(sim, (int, float)) or not 0 < sim <= 1:
        problems.append(f"max_similarity={sim!r}: expected a number in (0, 1]")
    splits = list(cfg.splits or [])
    if not splits or any(s not in SPLITS for s in splits):
        problems.append(f"splits={splits}: expected a non-empty list of {', '.join(SPLITS)}")
    if cfg.device not in ("auto", "cpu", "cuda"):
        problems.append(f"device={cfg.device!r}: expected auto, cpu or cuda")
    if cfg.ckpt and not Path(str(cfg.ckpt)).is_file():
        problems.append(f"ckpt={cfg.ckpt}: no such checkpoint file (leave ckpt out to train a generator first)")
    if cfg.task.name != "dg":
        problems.append(f"task={cfg.task.name}: the bank needs a distractor generator (task=dg, the default here)")
    try:
        check_config(cfg, "train")
    except ConfigError as err:
        problems.append(str(err).removeprefix("bad config: "))
    if problems:
        raise ConfigError("bad config: " + "; ".join(problems))


def _dg_stats_path(cfg: DictConfig) -> Path:
    """Where the bank's statistics go: ``stats=``, else ``<out>.stats.json``."""
    out = Path(str(cfg.out))
    return Path(str(cfg.stats)) if cfg.stats else out.with_name(out.name + ".stats.json")


def _unwritable(paths: Sequence) -> list[str]:
    """Why ``paths`` could not be written (:func:`check_writable`), once per directory."""
    problems, seen = [], set()
    for path in map(Path, paths):
        if path.parent in seen:
            continue
        seen.add(path.parent)
        try:
            check_writable(path)
        except OutputWriteError as err:
            problems.append(str(err))
    return problems


def bank_questions(cfg: DictConfig) -> list[MCExample]:
    """The questions of ``cfg.splits`` (``data.limit`` applies); ids must be unique across them."""
    from robust_mrc.data.sources import load_splits

    splits = load_splits(cfg.data, "mc", seed=int(cfg.seed))
    examples = [ex for s in cfg.splits for ex in splits.get(s) or []]
    seen: dict[str, int] = Counter(ex.id for ex in examples)
    twice = sorted(k for k, c in seen.items() if c > 1)
    if twice:
        raise ConfigError(
            f"data={cfg.data.name}: question id {twice[0]!r} occurs {seen[twice[0]]} times in splits="
            f"{list(cfg.splits)} ({len(twice)} such ids); a bank maps ids to distractors: choose fewer splits"
        )
    if not examples:
        raise ConfigError(f"data={cfg.data.name}: no questions in splits={list(cfg.splits)}")
    return examples


def load_generator(cfg: DictConfig):
    """The generator of ``ckpt=``, else of a ``train(cfg)`` run (its best checkpoint); with its path."""
    path = cfg.ckpt
    if not path:
        from robust_mrc.jobs.train import train

        path = train(cfg)["ckpt_path"]
        if not path:
            raise ConfigError("training wrote no best checkpoint (no validation split?): set data.holdout=0.1 or data.validation=")
    return load_generator_checkpoint(path, cfg.device, bool(cfg.trust_remote_code)), str(path)


def build_dg(cfg: DictConfig) -> dict:
    """Train (or load) the generator, generate, select, write the bank and its stats; the stats."""
    _check_dg(cfg)
    module, ckpt = load_generator(cfg)
    examples = bank_questions(cfg)
    out = Path(str(cfg.out))
    settings = {
        "ckpt": file_identity(ckpt),
        "data": str(cfg.data.name),
        "splits": list(cfg.splits),
        **{key: cfg[key] for key in ("beams", "n", "max_similarity", "exclude_options")},
        **{key: cfg.task[key] for key in ("max_length", "max_new_tokens", "no_repeat_ngram_size")},
    }
    journal = Journal(out.with_name(out.name + ".partial.jsonl"), settings)
    t = time.perf_counter()
    records, distinct = generate_bank(
        module,
        examples,
        beams=int(cfg.beams),
        batch_size=int(cfg.gen_batch_size),
        n=cfg.n,
        max_similarity=float(cfg.max_similarity),
        exclude_options=bool(cfg.exclude_options),
        max_new_tokens=int(cfg.task.max_new_tokens),
        no_repeat_ngram_size=int(cfg.task.no_repeat_ngram_size),
        journal=journal,
    )
    seconds = time.perf_counter() - t
    bank = {r["id"]: list(r["distractors"]) for r in records}
    write_bank(bank, out)
    journal.finish()
    stats = {
        "bank": str(out),
        "ckpt": ckpt,
        "data": cfg.data.name,
        "splits": list(cfg.splits),
        "beams": int(cfg.beams),
        "max_new_tokens": int(cfg.task.max_new_tokens),
        "no_repeat_ngram_size": int(cfg.task.no_repeat_ngram_size),
        **bank_stats(bank, examples),
        "distinct_beams_mean": round(sum(distinct) / max(1, len(distinct)), 2),
        "seconds": round(seconds, 1),
        "resumed_questions": journal.resumed,
        "questions_per_second": round((len(examples) - journal.resumed) / max(seconds, 1e-9), 2),
        "samples": [
            {
                "id": ex.id,
                "question": ex.question,
                "answer": ex.answer,
                "original": [o for i, o in enumerate(ex.options) if i != ex.label],
                "generated": r["distractors"],
            }
            for ex, r in list(zip(examples, records))[:5]
        ],
    }
    stats_path = _dg_stats_path(cfg)
    atomic_write_text(stats_path, json.dumps(stats, indent=2, ensure_ascii=False) + "\n")
    log.info("bank %s: %d questions; %s", out, len(records), format_stats(stats))
    if warning := collapse_warning(stats):
        log.warning(warning)
    return stats


def _build_dg_and_print(cfg: DictConfig) -> None:
    stats = build_dg(cfg)
    print(json.dumps({k: v for k, v in stats.items() if k != "samples"}, indent=1))


def dg_main(argv: Sequence[str]) -> int:
    """``robust-mrc banks dg KEY=VALUE ...`` (``--help``: the keys of ``robust_mrc/conf/bank_dg.yaml``)."""
    argv = ["--help" if a == "help" else a for a in argv]
    run_command(hydra_command, _build_dg_and_print, "bank_dg", argv)
    return 0
