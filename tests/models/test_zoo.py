"""Every hub architecture of ``robust_mrc/conf/model`` offline (the tiny models of :mod:`tests.zoo`): its
tokenizer kind, its base weights under the task heads, what the collators make of its quirks
(token types, XLNet's left padding and final ``<cls>``, SentencePiece offsets), and one training
step, an evaluation, an export and its re-import through the jobs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers
from omegaconf import OmegaConf

from robust_mrc.data.examples import Answer, MCExample, SpanExample
from robust_mrc.data.synthetic import make_synthetic_mc, make_synthetic_span
from robust_mrc.datamodules.mc import MCCollator
from robust_mrc.datamodules.span import SpanCollator
from robust_mrc.models.backbone import OFFLINE_PACKAGES, load_backbone, load_tokenizer
from tests.helpers import CONF, make_cfg
from tests.zoo import ENCODER_DECODERS, ZOO_OPTIONS, build_zoo

pytestmark = pytest.mark.usefixtures("one_torch_thread")

#: one option per reader architecture (roberta_base is roberta's), and the generators
READERS = [o for o in ZOO_OPTIONS if ZOO_OPTIONS[o] not in ENCODER_DECODERS and o != "roberta_base"]
GENERATORS = [o for o in ZOO_OPTIONS if ZOO_OPTIONS[o] in ENCODER_DECODERS]

#: per architecture: the tokenizer class the brief's hub checkpoint loads as, its ``tokenizers`` model
TOKENIZERS = {
    "bert": (transformers.BertTokenizerFast, "WordPiece"),
    "roberta": (transformers.RobertaTokenizerFast, "BPE"),
    "deberta_v2": (transformers.DebertaV2TokenizerFast, "Unigram"),
    "electra": (transformers.ElectraTokenizerFast, "WordPiece"),
    "albert": (transformers.AlbertTokenizerFast, "Unigram"),
    "xlnet": (transformers.XLNetTokenizerFast, "Unigram"),
    "t5": (transformers.T5TokenizerFast, "Unigram"),
    "bart": (transformers.BartTokenizerFast, "BPE"),
}
MODEL_TYPES = {
    "bert": ("bert", "BertForPreTraining"),
    "roberta": ("roberta", "RobertaForMaskedLM"),
    "deberta_v2": ("deberta-v2", "DebertaV2ForMaskedLM"),
    "electra": ("electra", "ElectraForPreTraining"),
    "albert": ("albert", "AlbertForMaskedLM"),
    "xlnet": ("xlnet", "XLNetLMHeadModel"),
    "t5": ("t5", "T5ForConditionalGeneration"),
    "bart": ("bart", "BartForConditionalGeneration"),
}
#: architectures pre-trained with segments: their batches carry token type ids (RoBERTa's do not)
SEGMENTS = {"bert", "electra", "deberta_v2", "albert", "xlnet"}


def tokenizer_of(tiny_zoo, option: str):
    return load_tokenizer({"pretrained": str(tiny_zoo[option])})


def test_every_hub_option_has_a_tiny_model():
    hub = set()
    for path in sorted(Path(CONF, "model").glob("*.yaml")):
        if OmegaConf.load(path).pretrained not in OFFLINE_PACKAGES:
            hub.add(path.stem)
    assert hub == set(ZOO_OPTIONS)


def test_the_zoo_is_built_the_same_every_time(tiny_zoo, tmp_path):
    again = build_zoo(tmp_path)
    for option, directory in tiny_zoo.items():
        files = sorted(p.name for p in Path(directory).iterdir())
        assert files == sorted(p.name for p in again[option].iterdir())
        for name in files:
            assert (Path(directory) / name).read_bytes() == (again[option] / name).read_bytes(), (option, name)


@pytest.mark.parametrize("option", sorted(ZOO_OPTIONS))
def test_tokenizer_and_config_are_of_the_architecture(tiny_zoo, option):
    arch = ZOO_OPTIONS[option]
    tokenizer = tokenizer_of(tiny_zoo, option)
    cls, kind = TOKENIZERS[arch]
    assert isinstance(tokenizer, cls)
    assert json.loads(tokenizer.backend_tokenizer.to_str())["model"]["type"] == kind
    assert tokenizer.padding_side == ("left" if arch == "xlnet" else "right")
    if arch != "xlnet":  # relative positions only: no length limit
        assert tokenizer.model_max_length == 512
    tokens = tokenizer.tokenize("Tom lives in Lisbon.")
    if kind == "Unigram":
        assert tokens[0].startswith("\u2581")  # SentencePiece's word start
    elif kind == "BPE":
        assert tokenizer.tokenize(" Tom")[0].startswith("\u0120")  # byte-level: the space is a byte
    config = transformers.AutoConfig.from_pretrained(tiny_zoo[option])
    assert (config.model_type, config.architectures) == (MODEL_TYPES[arch][0], [MODEL_TYPES[arch][1]])
    assert config.vocab_size >= len(tokenizer) and config.pad_token_id == tokenizer.pad_token_id


@pytest.mark.parametrize(("option", "task"), [(o, t) for o in READERS for t in ("mc", "span")] + [(o, "dg") for o in GENERATORS])
def test_the_saved_base_model_loads_under_the_task_head(tiny_zoo, option, task):
    """Every weight of the base model comes from the directory (ELECTRA: the discriminator's), but
    a pooler where the directory holds none (a masked-LM checkpoint: RoBERTa, ALBERT)."""
    from safetensors.torch import load_file

    saved = load_file(str(Path(tiny_zoo[option]) / "model.safetensors"))
    model = load_backbone({"pretrained": str(tiny_zoo[option])}, task)
    prefix = model.base_model_prefix
    base = model.base_model
    names = [n if base is model else f"{prefix}.{n}" for n, _ in base.named_parameters()]
    loaded = dict(model.named_parameters())
    for name in names:
        key = next((k for k in (name, name.removeprefix(f"{prefix}.")) if k in saved), None)
        if key is None and ".pooler." in f".{name}" and not any(".pooler." in f".{k}" for k in saved):
            continue
        assert key is not None, f"{name} is not in the saved model"
        assert torch.equal(saved[key], loaded[name].detach()), name


def span_examples() -> list[SpanExample]:
    """Synthetic examples (several windows each at 48 tokens), an answer out of the vocabulary,
    one at the start of the context, one after a run of white space, an unanswerable question."""
    ctx = "Zyxwerth is far. On Monday Tom lives in  Qorvand, not in Oslo.\nMaria flew to\n  Lisbon."
    return [
        *make_synthetic_span(3, 0),
        SpanExample("oov", ctx, "Where does Tom live?", (Answer("Qorvand", ctx.index("Qorvand")),)),
        SpanExample("first", ctx, "What is far?", (Answer("Zyxwerth", 0),)),
        SpanExample("spaces", ctx, "Where did Maria fly to?", (Answer("Lisbon", ctx.index("Lisbon")),)),
        SpanExample("none", ctx, "Where does Anna live?", ()),
    ]


def check_span_batch(batch: dict, examples: list[SpanExample], tokenizer) -> None:
    """Each window's gold positions cut exactly the gold answer, else both are its [CLS] token."""
    ids = batch["input_ids"]
    last = ids.shape[1] - 1
    for f, ex_i in enumerate(batch["feature_example"]):
        ex = examples[ex_i]
        start, end, null = int(batch["start_positions"][f]), int(batch["end_positions"][f]), int(batch["null_index"][f])
        assert int(ids[f, null]) == tokenizer.cls_token_id
        # XLNet: <cls> closes the window, and left padding puts it in the last column
        assert null == (last if tokenizer.padding_side == "left" else 0)
        if start == null:
            assert end == null
            continue
        offsets = batch["offsets"][f]
        assert ex.context[offsets[start, 0] : offsets[end, 1]] == ex.answers[0].text, (ex.id, f)


@pytest.mark.parametrize("option", READERS)
def test_span_gold_positions_cut_the_gold_answer(tiny_zoo, option):
    tokenizer = tokenizer_of(tiny_zoo, option)
    examples = span_examples()
    batch = SpanCollator(tokenizer, max_length=48, doc_stride=16)(examples)
    check_span_batch(batch, examples, tokenizer)
    starts, nulls = batch["start_positions"].tolist(), batch["null_index"].tolist()
    answered = {examples[i].id for i, s, n in zip(batch["feature_example"], starts, nulls) if s != n}
    assert answered == {ex.id for ex in examples if ex.answers}  # every answer is held by a window
    assert len(batch["feature_example"]) > len(examples)  # several windows per synthetic example
    # the text of a word's token starts with the word (DeBERTa's "▁word" covers the space before it)
    for f, ex_i in enumerate(batch["feature_example"]):
        texts = [examples[ex_i].context[s:e] for s, e in batch["offsets"][f].tolist() if s < e]
        assert not [t for t in texts if t[0].isspace() and t.strip()], f
    # long contexts are windowed from pieces: the same batch
    pieces = SpanCollator(tokenizer, max_length=48, doc_stride=16, long_context=40, piece_chars=30)(examples)
    assert list(pieces) == list(batch)
    for key, value in batch.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(value, pieces[key]), key
        elif isinstance(value, np.ndarray):
            assert np.array_equal(value, pieces[key]), key
        else:
            assert value == pieces[key], key


@pytest.mark.parametrize("option", READERS)
def test_token_type_ids_go_to_the_models_pretrained_with_segments(tiny_zoo, option):
    arch = ZOO_OPTIONS[option]
    tokenizer = tokenizer_of(tiny_zoo, option)
    mc = MCCollator(tokenizer, 96)(make_synthetic_mc(2, 0))
    span = SpanCollator(tokenizer, max_length=48, doc_stride=16)(span_examples())
    long = SpanCollator(tokenizer, max_length=48, doc_stride=16, long_context=40, piece_chars=30)(span_examples())
    for batch in (mc, span, long):
        assert ("token_type_ids" in batch) == (arch in SEGMENTS)
    if arch in SEGMENTS:
        types = mc["token_type_ids"][0][mc["attention_mask"][0].bool()].tolist()
        assert types[0] == 0 and 1 in types  # passage, then question + option
        if arch == "xlnet":
            assert types[-1] == 2  # <cls>: a segment of its own


def test_a_tokenizer_that_leaves_token_types_out_keeps_them_out(tiny_zoo):
    """DistilBERT's tokenizer: BERT's WordPiece and template, for a model without token types."""
    tokenizer = transformers.DistilBertTokenizer.from_pretrained(tiny_zoo["bert"])
    assert "token_type_ids" not in MCCollator(tokenizer, 96)(make_synthetic_mc(2, 0))
    assert "token_type_ids" not in SpanCollator(tokenizer, max_length=48, doc_stride=16)(span_examples())


@pytest.mark.parametrize("option", READERS)
def test_multiple_choice_rows_end_as_the_head_reads_them(tiny_zoo, option):
    """XLNet pads on the left, so the last token of every row (what its head reads) is ``<cls>``;
    the others start with [CLS] and pad on the right."""
    tokenizer = tokenizer_of(tiny_zoo, option)
    short = MCExample("s", "Tom lives in Oslo.", "Where does Tom live?", ("Oslo", "Lisbon"), 0)
    batch = MCCollator(tokenizer, 96)([short, *make_synthetic_mc(2, 0)])
    ids, mask = batch["input_ids"], batch["attention_mask"]
    assert (mask.sum(1) < ids.shape[1]).any()  # some rows are padded
    if ZOO_OPTIONS[option] == "xlnet":
        assert (ids[:, -1] == tokenizer.cls_token_id).all() and (mask[:, -1] == 1).all()
    else:
        assert (ids[:, 0] == tokenizer.cls_token_id).all() and (mask[:, 0] == 1).all()
    model = load_backbone({"pretrained": str(tiny_zoo[option])}, "mc").eval()
    inputs = {k: v.unsqueeze(0) for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        assert model(**inputs).logits.shape == (1, ids.shape[0])


DATA = ["data.n_train=4", "data.n_val=4", "data.n_test=4"]
TRAIN = [*DATA, "batch_size=4", "trainer.max_epochs=1", "+trainer.num_sanity_val_steps=0"]
TASK = {
    "mc": ["task.max_length=96"],
    "span": ["task.max_length=64", "task.doc_stride=16"],
    "dg": ["task.max_length=96", "task.max_new_tokens=4"],
}


RUNS = [(o, t) for o in READERS for t in ("mc", "span")] + [(o, "dg") for o in GENERATORS]


@pytest.mark.parametrize(("option", "task"), RUNS)
def test_train_evaluate_export_and_reimport(tiny_zoo, tmp_path, option, task):
    """One training step writes a checkpoint; a reader's checkpoint is evaluated into a report (a
    generator's: the run's validation, generation included); the export loads back with the same
    predictions."""
    from robust_mrc.export import export_checkpoint
    from robust_mrc.jobs.evaluate import evaluate
    from robust_mrc.jobs.train import train
    from robust_mrc.models.checkpoints import load_checkpoint
    from robust_mrc.models.pretrained import load_model

    overrides = [f"task={task}", f"model={option}", f"model.pretrained={tiny_zoo[option]}", *TRAIN, *TASK[task]]
    metrics = train(make_cfg(*overrides, "test_after_fit=false", f"output_dir={tmp_path / 'run'}"))
    ckpt = Path(metrics["ckpt_path"])
    assert ckpt.is_file() and metrics["val/n"] == 4
    exported = tmp_path / "hf"
    export_checkpoint(ckpt, exported)
    assert transformers.AutoConfig.from_pretrained(exported).model_type == MODEL_TYPES[ZOO_OPTIONS[option]][0]
    if task == "dg":
        assert metrics["val/loss"] > 0 and "val/f1" in metrics
        module = load_checkpoint(ckpt, expected_task=task)
        again = load_model(str(exported), dict(module.task_cfg))
        for key, value in module.backbone.state_dict().items():
            assert torch.equal(value, again.backbone.state_dict()[key]), key
        return
    # the checkpoint and its export, each evaluated on a suite (clean + one attacked set)
    suite = ["suite=advrace", "suite.sets=[{name: charswap}]"] if task == "mc" else ["suite=squad", "suite.sets=[{name: char_noise}]"]
    runs = {}
    for name, model in (("ckpt", f"ckpt_path={ckpt}"), ("hf", f"model.pretrained={exported}")):
        out = tmp_path / f"eval_{name}"
        cfg = make_cfg(
            f"task={task}",
            model,
            *DATA,
            *suite,
            "diagnostics=[]",
            f"cache_dir={tmp_path / 'cache'}",
            f"output_dir={out}",
            config_name="eval",
        )
        result = evaluate(cfg)
        metric = "test/acc" if task == "mc" else "test/f1"
        assert result["test/n"] == 4 and 0 <= result[metric] <= (1 if task == "mc" else 100)
        (model_name,) = json.loads((out / "report.json").read_text())["models"]
        runs[name] = {p.name: json.loads(p.read_text()) for p in (out / "predictions" / model_name.replace("/", "__")).glob("*.json")}
    assert sorted(runs["hf"]) == ["charswap.json" if task == "mc" else "char_noise.json", "clean.json"]
    assert runs["hf"] == runs["ckpt"]
