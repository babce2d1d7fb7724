"""The Distractor Extraction (DE) bank of Si et al. 2021 (AdvRACE), section 3.1, made by the
project's own span model: the library under ``robust-mrc banks de`` (:mod:`robust_mrc.cli.banks`,
which documents the command) and ``distractor_extraction bank=auto``
(:class:`robust_mrc.banks.auto.DistractorBanks`, which caches the bank). Both take the one path
:func:`build_de_bank` (training examples, target examples, :class:`DESettings`):

1. the training examples become span QA (each correct option inserted into its passage,
   :mod:`robust_mrc.banks.span_data`) and a span module is trained on them (the ``train_extractor``
   it is given: :func:`robust_mrc.jobs.extractor.train_extractor`), unless a span checkpoint is given;
2. the checkpoint reads every target question with its unmodified passage; its ``top`` (20) best
   spans over all windows, less those that cross a line break or end on a dangling word
   (``fragment``: "she's really a"), are walked in rank order (white space collapsed, leading
   punctuation and a speaker's tag "W:" dropped: :func:`span_text`) through the DE rules
   (:func:`robust_mrc.attacks.mc.distractors.filter_spans`, shared with the model-free stand-in
   ``de_lexical``) and the first ``n_options - 1`` kept (:func:`extract_bank`). The n-best lists
   read are journaled when a journal is given (:mod:`robust_mrc.core.journal`): a pass interrupted
   there goes on where it stopped.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from robust_mrc.attacks.mc.distractors import filter_spans
from robust_mrc.banks import BankError
from robust_mrc.banks.span_data import query_example
from robust_mrc.core import settings as S
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
    """The training config of the span extractor: ``task=span data=squad_local`` and ``overrides``
    (a mistake in them: :class:`BankError`)."""
    from robust_mrc.config.compose import compose_config
    from robust_mrc.core.errors import ConfigError

    try:
        return compose_config(None, "config", ["task=span", "data=squad_local", *overrides])
    except ConfigError as err:
        raise BankError(str(err)) from None


@dataclass(frozen=True)
class DESettings:
    """How a DE bank is made: ``overrides`` of the span extractor's training config (``train.py``
    keys on top of ``task=span data=squad_local``: ``model=``, ``trainer.max_epochs=``,
    ``task.max_length=``, ``batch_size=``, ...), ``seed`` (where each correct option is inserted),
    ``top`` (n-best spans walked) and ``name`` (the span data's name in the extractor's run)."""

    overrides: tuple[str, ...] = ()
    seed: int = 42
    top: int = S.TOP
    name: str = "mc"

    @classmethod
    def for_extractor(cls, model: str, epochs: int, max_length: int, batch_size: int, seed: int = 42, top: int = S.TOP, name: str = "mc"):
        """The settings of an extractor ``model`` (a ``robust_mrc/conf/model`` name) trained ``epochs`` epochs on
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
    train_extractor: Callable[..., tuple[str, dict]] | None = None,
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
    is called with the checkpoint and the training's summary as soon as the extractor is trained.
    ``train_extractor(splits, seed, cfg, work_dir, name) -> (checkpoint, summary)`` trains it
    (:func:`robust_mrc.jobs.extractor.train_extractor`: a training job), needed without ``ckpt``."""
    from robust_mrc.models.backbone import load_tokenizer
    from robust_mrc.models.checkpoints import load_checkpoint
    from robust_mrc.models.scoring import ModelScorer

    train_cfg = span_training_config(settings.overrides)
    extractor: dict = {}
    if not ckpt:
        if not train_examples:
            raise BankError("no training examples to train the span extractor on; give ckpt=PATH")
        if train_extractor is None:
            raise BankError("no extractor checkpoint (ckpt=PATH) and no train_extractor to train one")
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
