"""The Distractor Extraction (DE) bank of Si et al. 2021 (AdvRACE), section 3.1, made by the
project's own span model, end to end:

    python -m robust_mrc.banks.de data=dream_local out=banks/dream_de.jsonl [model=minilm]
        [trainer.max_epochs=2] [batch_size=8] [seed=42] [splits=train,validation,test]
        [ckpt=PATH] [top=20] [work_dir=PATH] [stats=PATH] [KEY=VALUE ...]

1. The training split of the multiple-choice ``data`` config becomes span QA: each correct option
   inserted at a random word position of its passage (``robust_mrc.banks.span_data``, hashed per
   example from ``seed``), written as SQuAD v1.1 files in ``work_dir/span_data/`` (train and,
   when the data has one, validation; else 10 % of the passages of train are held out).
2. The span module is trained on it by ``robust_mrc.jobs.train.train`` (``task=span
   data=squad_local``, the other ``KEY=VALUE`` arguments as for ``train.py``: ``model=``,
   ``trainer.*``, ``batch_size``, ``task.max_length``, ...), run directory ``work_dir/train``
   unless ``output_dir=`` is given. ``ckpt=PATH`` skips steps 1-2 and uses that span checkpoint.
3. The checkpoint reads every question of ``splits`` (default: every split of the data config)
   with its unmodified passage; its ``top`` (20) best spans over all windows, less those that
   cross a line break or end on a dangling word (``fragment``: "she's really a"), are walked in
   rank order (white space collapsed, leading punctuation and a speaker's tag "W:" dropped:
   :func:`span_text`) through the DE rules (:func:`robust_mrc.attacks.mc.distractors.filter_spans`, shared with
   the model-free stand-in ``de_lexical``) and the first ``n_options - 1`` kept.
   The n-best lists read are journaled in ``<out>.partial.jsonl`` (:mod:`robust_mrc.core.journal`):
   after a crash or preemption in this pass, the same command with ``ckpt=`` the extractor's
   checkpoint (``WORK_DIR/train/checkpoints/best.ckpt``) reads only the questions left.
4. The bank ``out`` (JSONL ``{"id", "distractors"}``, every question, possibly with fewer
   distractors than wrong options: ``distractor_extraction bank=`` backfills with the original
   ones, and leaves a question with none as it is) and ``out.stats.json`` (or ``stats=``):
   :func:`robust_mrc.banks.stats.bank_stats` per split and over all, the filter's drop counts,
   the extractor's checkpoint and validation scores. Both written atomically.

The command runs under ``@hydra.main`` with ``conf/bank_de.yaml`` (``conf/config.yaml`` with
``task=span``, the bank's own keys ``out``, ``stats``, ``ckpt``, ``splits``, ``top``, ``work_dir``
and their defaults; ``--help``, ``--cfg job``). ``data=`` and ``data.*`` (``data.limit=...``)
configure the multiple-choice data; the command line's other overrides configure the extractor's
training (:func:`training_overrides`). ``work_dir`` defaults to ``out`` without its suffix plus
``.work``; ``splits=train,test`` is read as ``splits=[train,test]``. A mistake prints one line
``Error: ...``; the files it writes (``out``, ``stats``, ``work_dir`` when it trains) are checked
before any work: neither an input nor a directory, and writable.

Steps 1-3 are :func:`build_de_bank` (training examples, target examples, :class:`DESettings`):
the command and ``distractor_extraction bank=auto`` (:mod:`robust_mrc.banks.auto`, which caches
the bank) take the same path.
"""

from __future__ import annotations

import copy
import logging
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf, open_dict

from robust_mrc.attacks.mc.distractors import filter_spans
from robust_mrc.banks import BankError
from robust_mrc.banks.cli import CONF, compose, parse_splits
from robust_mrc.banks.span_data import query_example, write_span_data
from robust_mrc.banks.stats import bank_stats, collapse_warning, format_stats
from robust_mrc.core.journal import Journal, file_identity
from robust_mrc.data.examples import MCExample
from robust_mrc.data.text import WORD_RE

log = logging.getLogger(__name__)

_LEADING_PUNCT = re.compile(r"^[^\w\"'(\[\u201c\u2018]+")
_SPEAKER_TAG = re.compile(r"^[A-Z][a-z]{0,14}(?: [A-Z][a-z]{0,14})?\s*:\s*")  # "W:", "Florist:", "Mr Smith:"
# a span ending on one of these words breaks off mid-phrase ("yes she's really a", "I want to"): articles,
# conjunctions, prepositions that are rarely particles, possessive determiners; not "in", "on", "by"
# ("Hold on"), "her", "his", "that", "this" (pronouns too). Not in the paper, whose extractor cuts its spans
DANGLING = frozenset("a an the and or but nor of to at for with from as into onto than if because my your its our their very".split())
HOLDOUT = 0.1  # share of train passages validating the extractor when the data has no validation


def span_text(text: str) -> str:
    """A predicted span as a candidate option: white space collapsed, punctuation that opens it
    (a span cut after a sentence's full stop: ". The train from") and a speaker's tag that opens a
    dialogue turn ("W: Here it is." -> "Here it is.") dropped; opening quotes and brackets kept."""
    text = _LEADING_PUNCT.sub("", " ".join(text.split()))
    return _LEADING_PUNCT.sub("", _SPEAKER_TAG.sub("", text))


def dangling(text: str) -> bool:
    """True when a span of two or more words ends on a word that needs one after it (:data:`DANGLING`),
    or the span is a lone letter (a speaker's tag without its colon: "F")."""
    words = WORD_RE.findall(text)
    if len(words) == 1 and len(words[0]) == 1 and words[0].isalpha():
        return True
    return len(words) >= 2 and not text.rstrip().endswith((".", "!", "?")) and words[-1].lower() in DANGLING


def extract_bank(
    scorer,
    examples: Sequence[MCExample],
    dropped: Counter | None = None,
    nbest_sizes: list[int] | None = None,
    chunk: int = 512,
    journal: Journal | None = None,
) -> dict[str, list[str]]:
    """``{id: distractors}``: each example's unmodified passage and question read by ``scorer`` (a
    :class:`~robust_mrc.models.scoring.ModelScorer` of a span module, or any object whose
    ``predict(span examples)`` gives predictions with ``nbest``, best first), its n-best spans
    filtered by the DE rules, at most ``n_options - 1`` kept. Before the rules, a span that crosses
    a line break (a speaker's turn in DREAM, a paragraph in RACE) is dropped (``line_break``: not
    in the paper; such a span reads as no option), :func:`span_text` cleans the others, and a
    cleaned span that ends on a dangling word is dropped (``fragment``: :func:`dangling`).
    ``dropped`` counts the rules that dropped candidates, ``nbest_sizes`` gets each example's
    n-best length. With ``journal``, the n-best lists of questions that an interrupted pass with the
    same settings read are taken from it, and each chunk of ``chunk`` questions read is appended."""
    queries = [query_example(ex) for ex in examples]
    finished = journal.load() if journal is not None else {}
    nbest: dict[int, tuple] = {}
    for i, ex in enumerate(examples):
        if ex.id in finished:
            nbest[i] = tuple((str(text), float(score)) for text, score in finished[ex.id]["nbest"])
    if nbest:
        log.info("resuming %s: %d of %d questions were read by an interrupted pass", journal.path, len(nbest), len(examples))
    if journal is not None:
        journal.open({examples[i].id: finished[examples[i].id] for i in nbest})
    todo = [i for i in range(len(queries)) if i not in nbest]
    order = sorted(todo, key=lambda i: -(len(queries[i].context) + len(queries[i].question)))
    try:
        for start in range(0, len(order), chunk):
            part = order[start : start + chunk]
            for i, pred in zip(part, scorer.predict([queries[i] for i in part])):
                nbest[i] = tuple((str(text), float(score)) for text, score in pred.nbest)
            if journal is not None:
                journal.append({"id": examples[i].id, "nbest": [list(c) for c in nbest[i]]} for i in part)
            log.info("DE bank: %d / %d questions read", len(examples) - len(order) + min(start + chunk, len(order)), len(examples))
    finally:
        if journal is not None:
            journal.close()
    dropped = Counter() if dropped is None else dropped
    bank = {}
    for i, ex in enumerate(examples):
        texts = [text for text, _ in nbest[i]]
        if nbest_sizes is not None:
            nbest_sizes.append(len(texts))
        one_line = [span_text(t) for t in texts if "\n" not in t.strip()]
        dropped["line_break"] += len(texts) - len(one_line)
        whole = [t for t in one_line if not dangling(t)]
        dropped["fragment"] += len(one_line) - len(whole)
        bank[ex.id] = filter_spans(whole, ex.answer, limit=len(ex.options) - 1, dropped=dropped)
    return bank


def span_training_config(overrides: Sequence[str]) -> DictConfig:
    """The training config of the span extractor: ``task=span data=squad_local`` and ``overrides``."""
    return compose(["task=span", "data=squad_local", *overrides])


def train_extractor(splits: dict[str, list], seed: int, cfg: DictConfig, work_dir: Path, name: str) -> tuple[str, dict]:
    """Steps 1-2 of the module doc with the training config ``cfg`` (its data replaced by the
    span files): the span checkpoint's path and what the training gave."""
    from robust_mrc.jobs.train import train

    span_dir = work_dir / "span_data"
    data_info = {"train": write_span_data(splits["train"], span_dir / "train.json", seed)}
    validation = None
    if splits.get("validation"):
        validation = span_dir / "validation.json"
        data_info["validation"] = write_span_data(splits["validation"], validation, seed)
    cfg = copy.deepcopy(cfg)
    with open_dict(cfg):
        cfg.data.name = f"{name}_de_span"
        cfg.data.train = str(span_dir / "train.json")
        cfg.data.validation = str(validation) if validation else None
        cfg.data.test = None
        cfg.data.limit = None
        if validation is None:
            cfg.data.holdout = HOLDOUT
        if not cfg.output_dir:
            cfg.output_dir = str(work_dir / "train")
    metrics = train(cfg)
    if not metrics.get("ckpt_path"):
        raise BankError(f"the span extractor's training in {metrics.get('run_dir')} saved no checkpoint")
    info = {"span_data": data_info, "run_dir": metrics.get("run_dir"), "val_f1": metrics.get("val/f1"), "val_em": metrics.get("val/em")}
    return metrics["ckpt_path"], info


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


@dataclass(frozen=True)
class DESettings:
    """How a DE bank is made: ``overrides`` of the span extractor's training config (``train.py``
    keys on top of ``task=span data=squad_local``: ``model=``, ``trainer.max_epochs=``,
    ``task.max_length=``, ``batch_size=``, ...), ``seed`` (where each correct option is inserted),
    ``top`` (n-best spans walked) and ``name`` (the span data's name in the extractor's run)."""

    overrides: tuple[str, ...] = ()
    seed: int = 42
    top: int = 20
    name: str = "mc"

    @classmethod
    def for_extractor(cls, model: str, epochs: int, max_length: int, batch_size: int, seed: int = 42, top: int = 20, name: str = "mc"):
        """The settings of an extractor ``model`` (a ``conf/model`` name) trained ``epochs`` epochs on
        windows of ``max_length`` tokens in batches of ``batch_size``."""
        overrides = (
            f"model={model}",
            f"trainer.max_epochs={int(epochs)}",
            f"task.max_length={int(max_length)}",
            f"batch_size={int(batch_size)}",
            f"seed={int(seed)}",
        )
        return cls(overrides, int(seed), int(top), name)


def build_de_bank(
    train_examples: Sequence[MCExample] | None,
    targets: Sequence[MCExample],
    settings: DESettings,
    *,
    work_dir: str | Path,
    validation: Sequence[MCExample] | None = None,
    ckpt: str | None = None,
    journal_path: str | Path | None = None,
    journal_settings: dict | None = None,
    report: dict | None = None,
    on_trained: Callable[[str, dict], None] | None = None,
) -> dict[str, list[str]]:
    """Steps 1-3 of the module doc: ``{id: distractors}`` for every example of ``targets``, read by a
    span extractor trained on ``train_examples`` (validated on ``validation``, else on 10 % of the
    training passages) with ``settings``, its run in ``work_dir``; ``ckpt`` (a span checkpoint)
    skips the training. The one path of the command and of ``distractor_extraction bank=auto``.

    ``journal_path`` journals the n-best lists read (settings: the checkpoint, ``top`` and
    ``journal_settings``): the caller finishes it (``report["journal"].finish()``) once the bank is
    written. ``report``, when given, receives the extractor's checkpoint (``ckpt``) and what its
    training gave (``extractor``), the filter's drop counts (``dropped``), the n-best sizes
    (``nbest_sizes``) and the journal (``journal``, None without ``journal_path``). ``on_trained``
    is called with the checkpoint and the training's summary as soon as the extractor is trained."""
    from robust_mrc.models.backbone import load_tokenizer
    from robust_mrc.models.checkpoints import load_checkpoint
    from robust_mrc.models.scoring import ModelScorer

    train_cfg = span_training_config(settings.overrides)
    extractor: dict = {}
    if not ckpt:
        if not train_examples:
            raise BankError("no training examples to train the span extractor on; give ckpt=PATH")
        splits = {"train": list(train_examples), "validation": list(validation or [])}
        ckpt, extractor = train_extractor(splits, settings.seed, train_cfg, Path(work_dir), settings.name)
        if on_trained is not None:
            on_trained(ckpt, extractor)
    module = load_checkpoint(ckpt, expected_task="span")
    module.task_cfg["n_best"] = settings.top
    scorer = ModelScorer(module, load_tokenizer(module.model_cfg), key=str(ckpt), batch_size=int(train_cfg.eval_batch_size))
    dropped: Counter = Counter()
    sizes: list[int] = []
    journal = None
    if journal_path is not None:
        journal = Journal(journal_path, {"ckpt": file_identity(ckpt), "top": settings.top, **(journal_settings or {})})
    bank = extract_bank(scorer, targets, dropped, sizes, journal=journal)
    if report is not None:
        report.update({"ckpt": str(ckpt), "extractor": extractor, "dropped": dropped, "nbest_sizes": sizes, "journal": journal})
    return bank


def own_keys() -> tuple[str, ...]:
    """The bank builder's own keys: those ``conf/bank_de.yaml`` adds to ``conf/config.yaml``."""
    return tuple(k for k in OmegaConf.load(CONF / "bank_de.yaml") if k not in ("defaults", "hydra"))


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


def run(cfg: DictConfig, overrides: Sequence[str] = ()) -> dict:
    """Run the module doc's steps for ``cfg`` (``conf/bank_de.yaml`` composed) and the command line's
    ``overrides`` (what it changed: :func:`training_overrides` configure the extractor); return the
    statistics."""
    from robust_mrc.attacks.pools import write_bank
    from robust_mrc.data.sources import load_splits
    from robust_mrc.data.writers import atomic_write_json

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


def _build(cfg: DictConfig) -> dict:
    from hydra.core.hydra_config import HydraConfig

    return run(cfg, list(HydraConfig.get().overrides.task))


def main(argv: list[str] | None = None) -> int:
    """``python -m robust_mrc.banks.de KEY=VALUE ...`` (``--help``: the keys of ``conf/bank_de.yaml``)."""
    from robust_mrc.config.cli import hydra_command, run_command

    argv = ["--help" if a == "help" else _as_list(a) for a in (sys.argv[1:] if argv is None else argv)]
    logging.basicConfig(level=logging.INFO, format="[%(name)s] %(message)s")
    run_command(hydra_command, _build, CONF, "bank_de", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
