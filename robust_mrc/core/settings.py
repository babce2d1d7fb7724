"""The settings of every config group: one typed definition each, the only home of a setting's
default, its allowed values and its one-line doc.

``robust_mrc/conf/`` YAML files choose values: an option of a group (``robust_mrc/conf/model/roberta.yaml``) starts from
its group's definition here (registered in Hydra's ConfigStore as ``<group>/base/defaults`` by
:func:`robust_mrc.config.schema.register`) and sets what differs. Validation
(:func:`robust_mrc.config.checks.check_config`) walks these definitions, so an error names the key
and what it accepts. Code reads a setting as ``cfg.key``; settings that come from elsewhere (a
checkpoint's saved ``task`` / ``model``, a plain dict in a test) are completed from here with
:func:`complete`, never with a default written in the code.

A check spec in a field's metadata: ``int`` / ``number`` (with ``lo``, ``hi``, ``lo_open``,
``hi_open``), ``bool``, ``choice`` (``choices``: the values, or ``"module:NAME"``, a tuple owned by
the room that uses it), ``text``, or none (checked by a cross-setting rule or not at all);
``null: True`` allows null. This module imports nothing of the package.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def setting(default: Any, doc: str, check: str | None = None, **spec: Any) -> Any:
    """A field: ``default`` (a list or dict default is copied per instance), its doc, its check."""
    meta = {"doc": doc, "check": check, **spec}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: _copy(default), metadata=meta)
    return field(default=default, metadata=meta)


def nested(cls: type, doc: str) -> Any:
    return field(default_factory=cls, metadata={"doc": doc, "check": None, "nested": cls})


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# train.py and evaluate.py: the top-level keys
# ---------------------------------------------------------------------------------------------


EMBEDDING_ADVERSARIES = ("freelb", "smart", "r3f")


@dataclass
class EmbeddingAdversarySettings:
    """Adversarial training in the input-embedding space (robust_mrc/models/embedding_adversary.py): FreeLB
    (Zhu et al. 2020), or the smoothness regularisers of SMART (Jiang et al. 2020) and R3F (Aghajanyan et al. 2021)."""

    method: str | None = setting(
        None, "null (off) | freelb | smart | r3f; task=mc and task=span", "choice", choices=EMBEDDING_ADVERSARIES, null=True
    )
    adv_steps: int = setting(2, "freelb: K, perturbed forward passes per step (K - 1 ascent steps between them)", "int", lo=1, hi=64)
    adv_lr: float = setting(
        0.1, "freelb: ascent step size (the gradient normalised to unit Frobenius norm per input row)", "number", lo=0.0
    )
    adv_init_mag: float = setting(
        0.1, "freelb: initial perturbation U(-m, m) / sqrt(real tokens x embedding size) per input row; 0 = start at zero", "number", lo=0.0
    )
    adv_max_norm: float | None = setting(
        1.0,
        "freelb: bound on the perturbation's Frobenius norm per input row (projected after each step); null = no bound",
        "number",
        lo=0.0,
        null=True,
    )
    weight: float = setting(
        1.0, "smart, r3f: lambda, the weight of the symmetric-KL smoothness term added to the task loss", "number", lo=0.0
    )
    noise: str = setting(
        "normal", "smart, r3f: the noise of the perturbation: normal N(0, s^2) | uniform U(-s, s)", "choice", choices=("normal", "uniform")
    )
    noise_std: float = setting(1e-5, "smart, r3f: s, the noise scale", "number", lo=0.0)
    smart_steps: int = setting(1, "smart: ascent steps of the noise on the symmetric KL", "int", lo=1, hi=64)
    smart_lr: float = setting(1e-3, "smart: ascent step size (the gradient normalised to unit max-norm per input row)", "number", lo=0.0)
    smart_eps: float = setting(1e-5, "smart: bound on the perturbation's max-norm (each entry within +-eps)", "number", lo=0.0)
    smart_project: str = setting(
        "clip",
        "smart: after each ascent step clip each entry to +-smart_eps | rescale each token's perturbation to max-norm "
        "smart_eps (as the SMART authors' code does, with eps 1 after the embeddings' LayerNorm)",
        "choice",
        choices=("clip", "rescale"),
    )


@dataclass
class TrainSettings:
    """``python train.py``: the keys of ``robust_mrc/conf/config.yaml`` besides its groups."""

    seed: int = setting(42, "the random seed (weights, data order, attacked copies)", "int", lo=0, hi=2**32 - 1)
    output_dir: str | None = setting(
        None, "the run directory: Hydra's output directory under train.py; set it for train(cfg) calls", "text"
    )
    batch_size: int = setting(
        8, "examples per optimizer step, all processes together (the papers' batch size); CPU-sized, experiments set theirs", "int", lo=1
    )
    micro_batch_size: Any = setting(
        None,
        "examples per process per forward/backward pass, accumulated up to batch_size; null = batch_size / processes; "
        "auto = the largest that fits the GPU (probed once, cached)",
    )
    eval_batch_size: int = setting(32, "examples per validation / test / predict batch", "int", lo=1, null=True)
    num_workers: int = setting(0, "DataLoader workers (tokenization and on-the-fly attacks run there)", "int", lo=0)
    progress_every: int = setting(
        50,
        "stdout not a terminal (SLURM, CI, > log): a plain progress line every N steps / batches; 0 = none",
        "int",
        lo=0,
        null=True,
    )
    group_by_length: bool = setting(True, "length-grouped training batches (dynamic padding pays off)", "bool")
    compile: Any = setting(
        False,
        "torch.compile: true (the backbone) | regional (each encoder layer: compile time of one layer) | false; "
        "in place, checkpoints keep their keys",
        "choice",
        choices="robust_mrc.models.compiling:COMPILE_MODES",
        as_text=True,
    )
    warm_shapes: bool = setting(
        True, "with task.length_buckets: one forward and backward pass per bucket width before the first step (no weight changes)", "bool"
    )
    ckpt_path: str | None = setting(
        None,
        'resume: a checkpoint path; "last": the run directory\'s last.ckpt (an error when none); '
        '"last_or_new": the same, or a fresh start when there is none (the SLURM scripts)',
        "text",
    )
    checkpoint_every_n_steps: int | None = setting(
        None,
        "also write checkpoints/last.ckpt every N training steps (a crash or requeue resumes within the epoch); "
        "null: after each validation only",
        "int",
        lo=1,
        null=True,
    )
    test_after_fit: bool = setting(True, "evaluate the best checkpoint on the test split when there is one", "bool")
    monitor: str | None = setting(
        None, "checkpoint metric (max; min for a loss); null = val/acc (mc), val/f1 (span) or val/loss (dg)", "text"
    )
    record_train_items: bool = setting(
        False, "debug: each rank's trained (id, attack, status, digest) in train_items/rank<k>.jsonl", "bool"
    )
    embedding_adversary: EmbeddingAdversarySettings = nested(
        EmbeddingAdversarySettings, "adversarial training in the input-embedding space (FreeLB, SMART, R3F); method=null: off"
    )


@dataclass
class EvalModelSettings:
    """``evaluate.py model.pretrained=...``: a Hugging Face model evaluated as it is (no checkpoint)."""

    pretrained: str | None = setting(
        None, "a model directory or hub name whose weights hold a trained head for the task (instead of ckpt_path)", "text"
    )
    revision: str | None = setting(None, "hub names: the branch, tag or commit to load; null = the default branch", "text")


@dataclass
class MagnetScreenSettings:
    """Lin, Zou & Ding 2021 magnet screening outside a suite (``evaluate.py magnet_screen.enabled=true``)."""

    enabled: bool = setting(
        False,
        "add a set `magnet_top`, screened against each evaluated checkpoint like a suite's {name: magnet, screen: ...} set",
        "bool",
    )
    pool: str | None = setting(None, "option file (txt / jsonl / RACE) or null: options of other passages (training split)")
    questions: int | None = setting(100, "screen over the first N questions of the split (null: all)", "int", lo=1, null=True)
    max_pool: int | None = setting(None, "a deterministic sample of K distinct pool options (null: all)", "int", lo=1, null=True)
    top: int = setting(100, "the magnets: the first `top` options by T_k (magnet_pool.txt)", "int", lo=1)
    attack_top: bool = setting(True, "false: the screening only, no `magnet_top` set", "bool")


@dataclass
class EvalSettings:
    """``python evaluate.py``: the keys of ``robust_mrc/conf/eval.yaml`` besides its groups."""

    ckpt_path: str | None = setting(None, "the checkpoint to evaluate (or model.pretrained=..., or ensemble=[...])", "text")
    model: EvalModelSettings = nested(EvalModelSettings, "a Hugging Face model to evaluate instead of a checkpoint")
    trust_remote_code: bool = setting(False, "true: the model's directory may run its own code (HF auto_map)", "bool")
    ensemble: list | None = setting(
        None, "checkpoints and Hugging Face models (directories, hub names): each is reported, and their ensemble"
    )
    ensemble_method: str | None = setting(
        None,
        "mc: average (option probabilities, default) | vote; span: token_vote",
        "choice",
        choices="robust_mrc.evaluation.ensemble:METHOD_NAMES",
        null=True,
    )
    split: str = setting("test", "the split evaluated: train | validation | test", "choice", choices="robust_mrc.data.sources:SPLITS")
    seed: int = setting(42, "the random seed; also seeds the attacked sets", "int", lo=0, hi=2**32 - 1)
    output_dir: str | None = setting(None, "the run directory: Hydra's output directory under evaluate.py", "text")
    eval_batch_size: int = setting(32, "examples per predict batch", "int", lo=1, null=True)
    search_precision: Any = setting(
        32,
        "the model-in-the-loop searches' forward passes: 32 | bf16 (autocast; ~1.8x faster on AVX512-BF16 CPUs; scores stay float32)",
        "choice",
        choices="robust_mrc.models.scoring:SEARCH_PRECISIONS",
        as_text=True,
    )
    num_workers: int = setting(0, "DataLoader workers", "int", lo=0)
    progress_every: int = setting(50, "stdout not a terminal: a plain progress line every N batches (0 = none)", "int", lo=0, null=True)
    cache_dir: str | None = setting(
        "${cache_root:}",
        "attacked sets and predictions (default: the cache root, $ROBUST_MRC_CACHE else ~/.cache/robust_mrc); null = off",
        "text",
    )
    report_examples: int = setting(
        30, "report.html: examples shown per attacked set (flipped first, then a sample; the rest in predictions/)", "int", lo=0
    )
    wandb: bool = setting(False, "true: log the report table and plots to a W&B run (offline unless WANDB_MODE=online)", "bool")
    wandb_project: str = setting("robust-mrc", "the W&B project of that run", "text")
    diagnostics: list = setting(
        ["confidence", "error_analysis", "pq_remove", "dpr"],
        "any of these; [] = none",
        "subset",
        choices="robust_mrc.evaluation.diagnose:KNOWN",
    )
    confidence_threshold: float = setting(
        0.9, '"high confidence" for the high-confidence error rate', "number", lo=0.0, hi=1.0, lo_open=True
    )
    error_folds: int = setting(10, "folds of the error predictor's shuffled cross-validation (Wu et al. 2021 section 6: 10)", "int", lo=2)
    magnet_screen: MagnetScreenSettings = nested(MagnetScreenSettings, "magnet screening outside a suite")


# ---------------------------------------------------------------------------------------------
# task: one definition per task
# ---------------------------------------------------------------------------------------------

TASK_NAMES = ("mc", "span", "dg")
# the longest token sequence a setting may ask for (128k; far beyond any reader's positions)
MAX_LENGTH = 1 << 17
_PAD_DOC = (
    "GPU: e.g. 64, batch widths rounded up (fewer distinct shapes to tune kernels for; extra padding costs on a CPU); "
    "keep max_length a multiple of it"
)
_BUCKETS_DOC = (
    "GPU: pad every batch to one of N fixed widths (max_length / N apart): N shapes, kernels and compiled graphs "
    "reused, warmed before the first step (trainer.warm_shapes); null = off"
)


@dataclass
class MCTaskSettings:
    """``task=mc``: multiple choice (RACE, DREAM)."""

    name: str = setting("mc", "the task", "choice", choices=TASK_NAMES)
    inputs: str = setting(
        "full", "full | options_only (PQ-remove) | question_options | passage_options", "choice", choices="robust_mrc.datamodules.mc:INPUTS"
    )
    max_length: int = setting(
        512,
        "tokens per (passage, question + option) row; the passage is cut, never the question or option",
        "int",
        lo=32,
        hi=MAX_LENGTH,
    )
    pad_to_multiple_of: int | None = setting(None, _PAD_DOC, "int", lo=1, null=True)
    length_buckets: int | None = setting(None, _BUCKETS_DOC, "int", lo=1, hi=64, null=True)


@dataclass
class SpanTaskSettings:
    """``task=span``: extractive QA (SQuAD, DuReader)."""

    name: str = setting("span", "the task", "choice", choices=TASK_NAMES)
    max_length: int = setting(384, "tokens per window (question + context)", "int", lo=32, hi=MAX_LENGTH)
    doc_stride: int = setting(128, "overlap of two windows of a long context, in tokens", "int", lo=1)
    n_best: int = setting(20, "start and end candidates per window when decoding", "int", lo=1)
    max_answer_length: int = setting(30, "longest answer decoded, in tokens", "int", lo=1)
    metric: str | None = setting(
        "auto",
        "the scorer (robust_mrc/conf/task/span.yaml takes data.metric): auto = squad_v2 when a question is unanswerable, "
        "else squad_v1 | squad | squad_v1 | squad_v2 | dureader (docs/metrics.md)",
        "choice",
        choices=("auto", "squad", "squad_v1", "squad_v2", "dureader"),
        null=True,
    )
    no_answer: Any = setting("auto", "SQuAD v2.0 no answer (null score vs best span, threshold tuned on validation): auto | true | false")
    max_windows: int | None = setting(
        32, "training: at most this many doc-stride windows of one example per step (the answer's first)", "int", lo=1, null=True
    )
    pad_to_multiple_of: int | None = setting(None, _PAD_DOC, "int", lo=1, null=True)
    length_buckets: int | None = setting(None, _BUCKETS_DOC, "int", lo=1, hi=64, null=True)


@dataclass
class DGTaskSettings:
    """``task=dg``: distractor generation (Si et al. 2021, section 3.2): passage + question + answer -> a wrong option."""

    name: str = setting("dg", "the task", "choice", choices=TASK_NAMES)
    max_length: int = setting(
        512, "source tokens: question [SEP] answer [SEP] passage; only the passage is cut", "int", lo=32, hi=MAX_LENGTH
    )
    max_target_length: int = setting(
        24, "target tokens (a wrong option and the end token); longer options are cut", "int", lo=2, hi=MAX_LENGTH
    )
    max_new_tokens: int = setting(20, "generation: at most this many new tokens (the paper's setting)", "int", lo=1, hi=MAX_LENGTH)
    no_repeat_ngram_size: int = setting(1, "generation: no repeated n-grams of this size (the paper's: unigrams)", "int", lo=0)
    val_generate: bool = setting(
        True, "validation/test also decode greedily: val/f1 (token F1 against the closest wrong option), val/answer_rate", "bool"
    )
    pad_to_multiple_of: int | None = setting(None, _PAD_DOC, "int", lo=1, null=True)


TASKS: dict[str, type] = dict(zip(TASK_NAMES, (MCTaskSettings, SpanTaskSettings, DGTaskSettings)))


# ---------------------------------------------------------------------------------------------
# model, data, attack
# ---------------------------------------------------------------------------------------------


@dataclass
class OptimSettings:
    """AdamW with linear warmup and decay."""

    lr: float = setting(3e-5, "peak learning rate", "number", lo=0.0, lo_open=True)
    weight_decay: float = setting(0.01, "AdamW weight decay (not on biases and LayerNorm weights)", "number", lo=0.0)
    warmup_ratio: float = setting(0.0, "share of the training steps with a linear warmup", "number", lo=0.0, hi=1.0, hi_open=True)
    adam_epsilon: float = setting(1e-8, "AdamW's epsilon", "number", lo=0.0, lo_open=True)
    betas: list = setting([0.9, 0.999], "AdamW's (beta1, beta2)")


@dataclass
class ModelSettings:
    """``model=...``: the weights and their optimiser. An option names ``name`` and ``pretrained``."""

    name: str = setting("???", "the option's name")
    pretrained: str = setting("???", "a Hugging Face hub name or a local model directory")
    revision: str | None = setting(None, "hub names: the branch, tag or commit to load; null = the default branch", "text")
    tokenizer: str | None = setting(None, "the tokenizer to load; null = the one of `pretrained`", "text")
    init: str = setting(
        "pretrained",
        "pretrained (load the weights) | random (the architecture's config, fresh weights)",
        "choice",
        choices=("pretrained", "random"),
    )
    init_seed: int = setting(0, "init=random: the seed of the fresh weights", "int", lo=0)
    config: dict = setting({}, "overrides of the Hugging Face config, e.g. {hidden_dropout_prob: 0.0}")
    cross_attention_init: str | None = setting(
        "self_attention",
        "task=dg from an encoder (BERT2BERT): self_attention (copies of each layer's self-attention; docs/dg-bank.md) | random",
        "choice",
        choices="robust_mrc.models.seq2seq:CROSS_ATTENTION_INITS",
        null=True,
    )
    trust_remote_code: bool = setting(False, "run the code of a model directory (HF auto_map); never taken from a checkpoint", "bool")
    optim: OptimSettings = nested(OptimSettings, "the optimiser")


@dataclass
class DataSettings:
    """``data=...``: an option names its own data (name, task, source and its files or generator)."""

    name: str = setting("???", "the option's name")
    task: str = setting("???", "the task of the data: mc | span", "choice", choices=("mc", "span"))
    source: str = setting("???", "synthetic | local | hub", "choice", choices=("synthetic", "local", "hub"))
    format: str | None = setting(
        "auto",
        "reader of local files (auto: from the file's layout); hub_race / hub_squad for the hub",
        "choice",
        choices="robust_mrc.data.readers:FORMATS",
        null=True,
    )
    strict: bool = setting(True, "false: skip bad records and report them (a split whose every record is bad is still an error)", "bool")
    limit: Any = setting(None, "at most N examples of every split, or per split: {train: 4000, validation: 1000}; null = all")
    holdout: float | None = setting(
        None,
        "when there is no validation split: fraction of train held out, by passage (e.g. 0.2)",
        "number",
        lo=0.0,
        hi=1.0,
        hi_open=True,
        null=True,
    )
    holdout_seed: int = setting(0, "the seed of that holdout (which passages are held out)", "int", lo=0)
    max_bytes: Any = setting(None, "cap on a local file's bytes after gunzip, e.g. 4GB; null = ROBUST_MRC_MAX_DATA_BYTES, else 2 GiB")
    subset: str | None = setting(None, "hub: the data set's subset (RACE: all | middle | high)", "text")
    metric: str = setting(
        "auto",
        "span data: its scorer (task.metric follows it): auto | squad_v1 | squad_v2 | dureader",
        "choice",
        choices=("auto", "squad", "squad_v1", "squad_v2", "dureader"),
    )


@dataclass
class AttackSettings:
    """``attack=...``: the training policy and its attacks. The single-attack options are targeted
    (Si et al. 2021, appendix D.1): each epoch a `rate` sample of the training set is attacked and
    added to (mode=add) or swapped into (mode=replace) the clean set."""

    name: str | None = setting(None, "the option's name (W&B tags, run names); null: the policy's", "text")
    policy: str = setting("targeted", "none | targeted | mix | augmented_option | amount", "choice", choices="robust_mrc.policies:POLICIES")
    rate: float = setting(0.25, "share of the training set each attack takes per epoch", "number", lo=0.0, hi=1.0)
    mode: str = setting("add", "add | replace", "choice", choices="robust_mrc.policies:MODES")
    amount: str = setting(
        "full", "policy=amount: none | half | full | both (Wu et al. 2021)", "choice", choices="robust_mrc.policies:AMOUNT_NAMES"
    )
    fresh_each_epoch: bool = setting(True, "new sample and new attacked copies every epoch", "bool")
    balance: float = setting(
        0.0,
        "share of attacked copies that carry their attack's mark on the gold side instead (its cue construction, "
        "robust_mrc.policies:CUE_ATTACKS); 0: off",
        "number",
        lo=0.0,
        hi=1.0,
    )
    consistency: str | None = setting(
        None,
        "kl: each attacked copy trains in the batch of its clean example, plus consistency_weight x the symmetric KL of "
        "their answer distributions (robust_mrc.datamodules.pairs); batch_size then counts clean examples; null: off",
        "choice",
        choices="robust_mrc.models.consistency:KINDS",
        null=True,
    )
    consistency_weight: float = setting(1.0, "attack.consistency: the weight of the KL term in the training loss", "number", lo=0.0)
    attacks: list | None = setting(None, "the training attacks: [{name, params, train_params}]; null: attacks_by_task[task]")
    attacks_by_task: dict | None = setting(None, "the training attacks per task ({mc: [...], span: [...]}) when attacks is null")
    eval: list | None = setting(None, "attacked validation/test sets; null = eval_by_task[task], else the training attacks (params only)")
    eval_by_task: dict | None = setting(None, "the attacked validation/test sets per task when eval is null")


# the groups whose options start from a definition here: Hydra group -> definition
GROUPS: dict[str, type] = {"model": ModelSettings, "data": DataSettings, "attack": AttackSettings}


# ---------------------------------------------------------------------------------------------
# the tool commands' own keys: robust-mrc export / attacks / banks de / banks dg
# ---------------------------------------------------------------------------------------------

#: the n-best spans (or ranked options) walked per question: the paper's 20 (Si et al. 2021; Lin, Zou & Ding 2021)
TOP = 20


@dataclass
class ExportSettings:
    """``robust-mrc export``: the keys of ``robust_mrc/conf/export.yaml``."""

    ckpt: str | None = setting(None, "the checkpoint (RUN/checkpoints/best.ckpt); required", "text")
    out: str | None = setting(None, "the model directory to write; required", "text")
    report: str | None = setting(None, "an evaluation's report.json: its table goes into the model card too", "text")
    overwrite: bool = setting(False, "true: replace an existing out", "bool")
    trust_remote_code: bool = setting(False, "true: the checkpoint's model directory may run its own code (HF auto_map)", "bool")


@dataclass
class AttacksCommandSettings:
    """``robust-mrc attacks``: its own keys (``args`` of ``robust_mrc/conf/attacks.yaml``; the
    attack's parameters are ``params``). Checked by the command (:mod:`robust_mrc.cli.attacks`), which
    also takes them as a mapping spelled as on the command line."""

    attack: str | None = setting(None, "the attack's name (`list` shows them); apply and stats need it")
    data: str | None = setting(None, "the data (race_jsonl, race_original, dream, squad, hf_dataset: detected); apply and stats need it")
    out: str | None = setting(
        None,
        "apply: the attacked file, or directory with format=hf (needed); stats: also write the statistics there; "
        "audit: the new directory of the sheet (needed)",
    )
    task: str | None = setting(None, "mc | span; null = the data's (list: every task's attacks)")
    seed: int = setting(0, "the seed of the attack's draws (each example's draw hashes seed, epoch and id)")
    epoch: int = setting(0, "the epoch of the draws (a training run's attacked copy of epoch k: epoch=k)")
    limit: int | None = setting(None, "the first N examples of data; null = all")
    sample: int | None = setting(
        None, "stats: a random sample of N examples (of the first `limit`): random.Random(sample_seed).sample; null = all"
    )
    sample_seed: int = setting(0, "stats: the seed of that sample")
    format: str | None = setting(None, "apply: the output format (race_jsonl | race_original | dream | squad | hf); null = the input's")
    split: str = setting("test", "apply format=hf: the dataset's split (train | validation | test)")
    pool_data: str | None = setting(
        None, "data whose examples pool and bank attacks draw on, and the fingerprint names (an evaluation's training split); null = data"
    )
    pool_limit: int | None = setting(None, "the first N examples of pool_data (an evaluation's data.limit); null = all")
    stats: str | None = setting(None, "apply: the statistics file; null = <out>.stats.json (format=hf: <out>/stats.json)")
    keep_failed: bool = setting(True, "apply: keep the examples the attack cannot change, as they are (false: drop them)")
    strict: bool = setting(True, "a bad record in data is an error (false: skipped and counted)")
    ckpt: str | None = setting(
        None,
        "apply: search against this model: a checkpoint, a Hugging Face model directory or hub name "
        "(addany, addcommon; span addsent, addonesent, addsentmod)",
    )
    batch_size: int = setting(32, "apply with ckpt: examples per forward pass")
    precision: str = setting("32", "apply with ckpt: 32 | bf16 (bfloat16 autocast: faster on CPUs with AVX512-BF16)")
    n: int = setting(50, "audit: the attacked rows of the sheet")
    controls: int | None = setting(None, "audit: the unattacked control rows mixed in; null = 10 % of n, at least 5")
    sheet: str | None = setting(None, "audit score: the filled sheet (sheet.csv)")
    key: str | None = setting(None, "audit score: the sheet's key; null = key.json beside the sheet")


@dataclass
class BankDESettings:
    """``robust-mrc banks de``: the keys ``robust_mrc/conf/bank_de.yaml`` adds to ``config.yaml``
    (checked by :mod:`robust_mrc.cli.banks`)."""

    out: str | None = setting(None, 'the bank file (JSONL: {"id": ..., "distractors": [...]}); required')
    stats: str | None = setting(None, "its statistics (JSON); null = <out>.stats.json")
    ckpt: str | None = setting(
        None, "a span checkpoint: skips the extractor's training (after a crash: WORK_DIR/train/checkpoints/best.ckpt)"
    )
    splits: Any = setting(None, "the questions the bank covers, e.g. [test] or train,test; null = every split with examples")
    top: int = setting(TOP, "the n-best spans walked per question (the paper's 20)")
    work_dir: str | None = setting(
        None, "the span data (span_data/) and the extractor's run (train/); null = out without its suffix + .work"
    )


@dataclass
class BankDGSettings:
    """``robust-mrc banks dg``: the keys ``robust_mrc/conf/bank_dg.yaml`` adds to ``config.yaml``
    (checked by :mod:`robust_mrc.cli.banks`)."""

    out: str | None = setting(None, 'the bank file (JSONL: {"id": ..., "distractors": [...]}); required')
    stats: str | None = setting(None, "its statistics (JSON); null = <out>.stats.json")
    ckpt: str | None = setting(None, "a task=dg checkpoint: skips training (loaded weights-only, like evaluate.py)")
    splits: list = setting(["train", "validation", "test"], "the questions the bank covers (ids must be unique across them)")
    beams: int = setting(50, "beam size k; every beam is returned and the selection walks them")
    n: int | None = setting(None, "distractors per question; null = the question's number of wrong options")
    max_similarity: float = setting(0.5, "keep a later beam only when its token Jaccard similarity to every kept one is below this")
    exclude_options: bool = setting(False, "true: never keep a beam equal to one of the question's own wrong options (always: the answer)")
    gen_batch_size: int = setting(8, "questions per beam search (each is expanded to `beams` hypotheses)")
    device: str = setting("auto", "auto (cuda when available) | cpu | cuda")
    trust_remote_code: bool = setting(False, "true: the generator's model directory may run its own code (HF auto_map)")


#: the tool commands' settings: ConfigStore name -> definition (robust_mrc.config.schema.register)
COMMAND_SETTINGS: dict[str, type] = {
    "export_settings": ExportSettings,
    "attacks_settings": AttacksCommandSettings,
    "bank_de_settings": BankDESettings,
    "bank_dg_settings": BankDGSettings,
}


# ---------------------------------------------------------------------------------------------
# reading the definitions
# ---------------------------------------------------------------------------------------------


def defaults(cls: type) -> dict[str, Any]:
    """The defaults of a definition as a plain nested dict (what Hydra's ConfigStore holds)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if "nested" in f.metadata:
            out[f.name] = defaults(f.metadata["nested"])
        elif f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        else:
            out[f.name] = f.default_factory()  # type: ignore[misc]
    return out


def complete(cls: type, values: Mapping[str, Any] | None) -> dict[str, Any]:
    """``values`` over the defaults of ``cls`` (nested definitions merged key by key); keys the
    definition does not know are kept."""
    out = defaults(cls)
    nested_fields = {f.name: f.metadata["nested"] for f in dataclasses.fields(cls) if "nested" in f.metadata}
    for key, value in (values or {}).items():
        if key in nested_fields and isinstance(value, Mapping):
            out[key] = complete(nested_fields[key], value)
        else:
            out[key] = value
    return out


def complete_task(values: Mapping[str, Any]) -> dict[str, Any]:
    """A task's settings completed from the definition of its ``name``."""
    name = values.get("name")
    if name not in TASKS:
        raise ValueError(f"task.name={name!r}: expected one of {', '.join(TASKS)}")
    return complete(TASKS[name], values)


def walk(cls: type, prefix: str = "") -> list[tuple[str, dataclasses.Field]]:
    """``(dotted key, field)`` of every setting of ``cls``, nested definitions included."""
    out = []
    for f in dataclasses.fields(cls):
        key = f"{prefix}{f.name}"
        if "nested" in f.metadata:
            out += walk(f.metadata["nested"], key + ".")
        else:
            out.append((key, f))
    return out
