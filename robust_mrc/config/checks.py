"""Config checks: the values of a train or evaluate config, checked before any work, the key named.

:func:`check_config` runs at the start of ``train(cfg)`` and of ``python evaluate.py``: every
setting by its definition (type, range, allowed values: :mod:`robust_mrc.core.settings`), then the
rules across settings (``task.doc_stride < task.max_length``, ``data.limit`` per split, task=dg on
clean multiple-choice data), ``trainer`` keys that ``pytorch_lightning.Trainer`` does not take, and
``trainer=gpu`` on a machine without a GPU. Every problem found is listed in one :class:`ConfigError`.

:func:`check_lengths` is the data-dependent part, run once the examples are read: a span question
that leaves no room for a ``doc_stride`` of context is an error naming the example (the tokenizer
would stop with a Rust panic inside a DataLoader worker); multiple-choice questions and options
that do not fit ``task.max_length`` are cut by the collator and only counted in a warning.
"""

from __future__ import annotations

import difflib
import inspect
import logging
from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig

from robust_mrc.core import settings as S
from robust_mrc.core.checking import Checker as _Checker
from robust_mrc.core.checking import check_model_sizes, check_settings, check_task
from robust_mrc.core.errors import ConfigError
from robust_mrc.data.sources import SPLITS

log = logging.getLogger(__name__)

MIN_MAX_LENGTH = 32  # below this no passage, question and option fit at all
# Trainer arguments robust-mrc sets itself: a config value would clash with them
RESERVED_TRAINER_KEYS = {
    "default_root_dir": "output_dir=",
    "callbacks": "the code",
    "logger": "logger=",
    "plugins": "the code",
    "accumulate_grad_batches": "batch_size= for the examples per optimizer step and micro_batch_size= per pass",
}
PRECISIONS = {
    "auto",
    "16",
    "32",
    "64",
    "bf16",
    "16-true",
    "16-mixed",
    "bf16-true",
    "bf16-mixed",
    "32-true",
    "64-true",
    "transformer-engine",
    "transformer-engine-float16",
}


def _check_task(c: _Checker, kind: str) -> None:
    if c.value("task.name") == "dg" and kind != "train":
        c.problems.append(
            "task=dg: evaluate.py evaluates readers (task=mc or task=span); a distractor generator "
            "makes a bank: robust-mrc banks dg ckpt=PATH data=... out=bank.jsonl"
        )
        return
    name = c.value("task.name")
    if name not in S.TASKS:
        c.choice("task.name", tuple(S.TASKS))
        return
    check_task(c, name)
    if name == "dg":
        _check_generation(c)


def _check_generation(c: _Checker) -> None:
    """Task ``dg``: generation settings, and clean training only (attacks are for readers)."""
    if c.value("data.task") not in (None, "mc"):
        c.problems.append(
            f"data={c.value('data.name')} is a {c.value('data.task')!r} data set: task=dg learns from "
            "multiple-choice data (e.g. data=dream_local, data=race_local)"
        )
    policy, evals = c.value("attack.policy"), c.value("attack.eval")
    if policy not in (None, "none") or evals:
        c.problems.append(
            f"attack={c.value('attack.name')}: task=dg trains the distractor generator on clean "
            "multiple-choice data only; use attack=none (and no attack.eval)"
        )


def _check_data(c: _Checker) -> None:
    from robust_mrc.data.readers._files import parse_size

    check_settings(c, S.DataSettings, "data.")
    for key in ("data.n_train", "data.n_val", "data.n_test"):
        c.integer(key, 0)
    limit = c.value("data.limit")
    if isinstance(limit, (DictConfig, Mapping)):
        for split in limit:
            if split not in SPLITS:
                c.bad(f"data.limit.{split}", limit[split], f"a split: {', '.join(SPLITS)}")
            else:
                c.integer(f"data.limit.{split}", 0, null=True)
    elif limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        c.bad("data.limit", limit, "an integer >= 0, a mapping such as {train: 4000, validation: 1000}, or null")
    if c.value("data.max_bytes") is not None:
        try:
            parse_size(c.value("data.max_bytes"), "data.max_bytes")
        except ValueError as err:
            c.problems.append(str(err))


def _trainer_parameters() -> set[str]:
    import pytorch_lightning as pl

    return set(inspect.signature(pl.Trainer.__init__).parameters) - {"self"}


def _check_trainer(c: _Checker) -> None:
    trainer = c.value("trainer")
    if trainer is None:
        return
    known = _trainer_parameters()
    for key in trainer:
        if key in RESERVED_TRAINER_KEYS:
            c.problems.append(f"trainer.{key} is set by robust-mrc itself (use {RESERVED_TRAINER_KEYS[key]})")
        elif key not in known:
            close = difflib.get_close_matches(str(key), sorted(known), n=1)
            hint = f"; did you mean trainer.{close[0]}?" if close else ""
            c.problems.append(f"trainer.{key}: not an argument of pytorch_lightning.Trainer{hint}")
    c.integer("trainer.max_epochs", -1)
    c.integer("trainer.max_steps", -1)
    c.integer("trainer.log_every_n_steps", 1)
    c.integer("trainer.num_nodes", 1)
    c.number("trainer.gradient_clip_val", 0.0, null=True)
    precision = c.value("trainer.precision")
    if precision is not None and str(precision) not in PRECISIONS:
        c.bad("trainer.precision", precision, "one of " + ", ".join(sorted(PRECISIONS)))
    if str(c.value("trainer.accelerator")) in ("gpu", "cuda"):
        import torch

        if not torch.cuda.is_available():
            c.problems.append(
                f"trainer.accelerator={c.value('trainer.accelerator')} but this machine has no GPU that "
                "PyTorch can use (torch.cuda.is_available() is False): use trainer=cpu (trainer=ddp_cpu "
                "for several processes)"
            )


def _check_train(c: _Checker) -> None:
    check_settings(c, S.TrainSettings)
    method = c.value("embedding_adversary.method")
    if method is not None and c.value("task.name") == "dg":
        c.problems.append(f"embedding_adversary.method={method} perturbs a reader's answer distribution: use it with task=mc or task=span")
    micro = c.value("micro_batch_size")
    if micro is not None and micro != "auto" and not (isinstance(micro, int) and not isinstance(micro, bool) and micro >= 1):
        c.bad("micro_batch_size", micro, "a whole number >= 1, auto or null")
    c.choice("logger.name", ("csv", "wandb", "none"), null=True)
    if c.value("model") is not None:
        check_settings(c, S.ModelSettings, "model.")
        check_model_sizes(c)
    if c.value("attack") is not None:
        check_settings(c, S.AttackSettings, "attack.")
        from robust_mrc.datamodules.pairs import pairing_problem

        problem = pairing_problem(c.value("attack.policy"), c.value("attack.consistency"))
        if problem:
            c.problems.append(problem)


def _check_eval(c: _Checker) -> None:
    check_settings(c, S.EvalSettings)


def check_config(cfg: DictConfig, kind: str = "train") -> None:
    """Raise a :class:`ConfigError` listing every key of ``cfg`` (a ``train.py`` config, or with
    ``kind="eval"`` an ``evaluate.py`` one) whose value cannot work."""
    c = _Checker(cfg)
    _check_task(c, kind)
    if c.value("data") is not None:
        _check_data(c)
    _check_trainer(c)
    (_check_train if kind == "train" else _check_eval)(c)
    if c.problems:
        raise ConfigError("bad config: " + "; ".join(c.problems))


def check_lengths(task_cfg: Mapping[str, Any], tokenizer, splits: Mapping[str, list]) -> None:
    """Span: every question must leave more than ``task.doc_stride`` tokens of context in a window
    of ``task.max_length`` (else a :class:`ConfigError` naming the longest question). Multiple
    choice: question + option pairs longer than ``task.max_length`` are counted in a warning (the
    collator cuts them)."""
    max_length = int(task_cfg["max_length"])
    for split in SPLITS:
        examples = splits.get(split) or []
        if not examples:
            continue
        if task_cfg["name"] == "span":
            _check_span_questions(task_cfg, tokenizer, examples, split, max_length)
        else:
            _count_long_mc(tokenizer, examples, split, max_length)


def _token_lengths(tokenizer, texts: list[str]) -> list[int]:
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]


def _check_span_questions(task_cfg, tokenizer, examples, split: str, max_length: int) -> None:
    stride = int(task_cfg["doc_stride"])
    special = tokenizer.num_special_tokens_to_add(pair=True)
    lengths = _token_lengths(tokenizer, [ex.question.lstrip() for ex in examples])
    longest = max(range(len(examples)), key=lengths.__getitem__)
    n = lengths[longest]
    if max_length - n - special <= stride:
        raise ConfigError(
            f"task.max_length={max_length} is too small for question {examples[longest].id!r} of the "
            f"{split} split ({n} tokens): a window needs the question, {special} special tokens and more "
            f"than task.doc_stride={stride} context tokens; set task.max_length>={n + special + stride + 1} "
            f"or lower task.doc_stride"
        )


def _count_long_mc(tokenizer, examples, split: str, max_length: int) -> None:
    special = tokenizer.num_special_tokens_to_add(pair=True)
    questions = _token_lengths(tokenizer, [ex.question for ex in examples])
    options = iter(_token_lengths(tokenizer, [o for ex in examples for o in ex.options]))
    too_long = [ex.id for ex, q in zip(examples, questions) if q + max(next(options) for _ in ex.options) + special > max_length]
    if too_long:
        log.warning(
            "task.max_length=%d: in %d of %d %s questions the question and an option alone are "
            "longer (e.g. %s): the collator cuts them, and the passage is left out",
            max_length,
            len(too_long),
            len(examples),
            split,
            too_long[0],
        )
