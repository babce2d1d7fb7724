"""``robust-mrc attacks``: list the attacks, write an attacked copy of a data file with its statistics,
or audit an attack.

    robust-mrc attacks list [task=mc|span]
    robust-mrc attacks apply attack=charswap data=PATH out=PATH [seed=0] [limit=N]
        [format=race_jsonl|race_original|dream|squad|hf] [stats=PATH] [keep_failed=true] [KEY=VALUE ...]
    robust-mrc attacks apply attack=charswap data=test.json out=DIR format=hf [split=test] seed=42
        [pool_data=train.json] [pool_limit=N]
    robust-mrc attacks apply attack=addany ckpt=RUN/checkpoints/best.ckpt data=PATH out=PATH [budget=600]
    robust-mrc attacks stats attack=addsent data=PATH [limit=150] [seed=0] [out=PATH] [KEY=VALUE ...]
    robust-mrc attacks audit attack=addsent data=PATH out=DIR [n=50] [seed=0] [controls=N] [KEY=VALUE ...]
    robust-mrc attacks audit score sheet=DIR/sheet.csv [key=DIR/key.json]
    robust-mrc attacks stats attack=addsent task=span data=dev-v1.1.json sample=500 sample_seed=2017

``stats`` measures what the attack does to the data beside its paper's published figures
(:mod:`robust_mrc.attacks.fidelity`: AddSent's "not" share, synonym and name replacements, CharSwap's
share of words altered, DE's overlap with the answer; span AddSent's share of questions attacked and
of its sentences repaired and passed by the grammar check) and prints them as JSON (``out=``: also
written). ``sample=N`` measures ``random.Random(sample_seed).sample`` of N examples (of the first
``limit``) instead of all.

``audit`` writes a blinded judging sheet of the attack's examples mixed with unlabelled clean
controls into the directory ``out=`` (``sheet.csv``, ``sheet.md``, ``instructions.md``, and
``key.json``, which the judge must not open); ``audit score`` turns the filled sheet into the
validity / flip / fluency table with 95 % Wilson intervals and the controls checked
(``<sheet>.score.md`` and ``.score.json``, printed): :mod:`robust_mrc.attacks.audit`.

``data=`` is a file the readers load (format detected); the attacked set is written in the input's
own format (or ``format=``), with examples the attack cannot change kept as they are
(``keep_failed=false`` drops them), and a JSON of statistics beside it (``OUT.stats.json`` or
``stats=``). Any other ``KEY=VALUE`` is a parameter of the attack, e.g.
``question_only=true``, ``pool=options.txt``, ``bank=de.jsonl``, ``position=random``. Attacks that
need a pool of options (magnet, extra_option, distractor_generation) get the input data itself
when no ``pool=`` is given (never the same passage), or the examples of ``pool_data=`` (the first
``pool_limit``; an evaluation gives them its training split). With ``ckpt=`` an attack that can use a model
(span ``addsent``/``addonesent``/``addsentmod``: the worst candidate; ``addany``, ``addcommon``: local
search) runs its search against that model (a checkpoint, or a Hugging Face model directory or hub
name; ``batch_size=`` examples per forward pass,
``precision=bf16`` for bfloat16 autocast: faster on CPUs with AVX512-BF16) and the
statistics add the model queries and queries per second.

``format=hf`` writes a Hugging Face ``datasets`` dataset to the directory ``out=``
(:mod:`robust_mrc.export.hf_dataset`): ``save_to_disk`` (split ``split=``, test by default) and the
same rows as parquet, in the RACE / SQuAD hub layouts with the examples' edits; ``README.md``, its
dataset card (the source data, the attack and its paper, every parameter with the defaults resolved,
the resources, seed, epoch, counts, the checks made on the written rows, the command that makes it
again) and ``stats.json``. The card carries the set's fingerprint, the one an evaluation
(``evaluate.py`` with the same seed and a suite set of the same attack and parameters,
:func:`robust_mrc.evaluation.suites.attacked_set_fingerprint`) gives the same set, which it
attacks into the same examples, when its pool is the same (``pool_data=`` its training split,
``pool_limit=`` its ``data.limit``). ``data=hf_local data.test=DIR`` (or any ``data=`` with
``format: hf_dataset`` / auto) reads it back.

The command runs under ``@hydra.main`` with ``robust_mrc/conf/attacks.yaml`` (``--help``, ``--cfg job``): the
verb is the first argument, the command's own keys are ``args.KEY`` and the attack's parameters
``params.KEY`` (:func:`hydra_arguments` spells the command line so), values as Hydra reads them
(``true``, ``0.25``, ``[a,b]``, ``null``). A mistake prints one line, ``Error: ...``.
"""

from __future__ import annotations

import functools
import json
import random
import re
import sys
import time
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from robust_mrc.attacks import list_attacks
from robust_mrc.attacks.apply import AttackSpecError, attack_example, build_attack
from robust_mrc.attacks.base import AttackUnavailable
from robust_mrc.attacks.fidelity import attack_stats
from robust_mrc.core import settings as S
from robust_mrc.data.examples import MCExample

COMMANDS = ("list", "apply", "stats", "audit")
SCORE = "score"  # audit's second verb: `audit score sheet=FILE`
HF = "hf"  # apply's format=hf: a Hugging Face datasets directory with its dataset card
_HELP_FLAGS = ("-h", "--help", "help")


def own_defaults() -> dict:
    """The command's own keys and their defaults (:class:`robust_mrc.core.settings.AttacksCommandSettings`)."""
    return S.defaults(S.AttacksCommandSettings)


def _arguments(cfg) -> tuple[dict, dict]:
    """``(own keys, attack parameters)`` of ``cfg``: ``robust_mrc/conf/attacks.yaml`` composed (``args``,
    ``params``), or a mapping as the command line spells it (``{"attack": ..., "data": ...,
    "question_only": True}``: a key that is not the command's own is a parameter). Own keys not
    given take their defaults."""
    given = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg)
    own = own_defaults()
    params = dict(given.pop("params", None) or {})
    own.update(given.pop("args", None) or {})
    for key, value in given.items():
        if key in own:
            own[key] = value
        else:
            params[key] = value
    return own, params


def _search(attack, examples: list, cfg: dict, task: str, seed: int, epoch: int, limit: int | None, params: dict):
    """``[(example, changed)]``, query statistics of ``attack``'s search against ``ckpt=``, and the
    search's journal (``<out>.partial.jsonl``: run again after a crash, the search goes on from its
    last finished group; remove it with ``finish()`` once ``out`` is written)."""
    from robust_mrc.attacks.search import run_search, searches
    from robust_mrc.core import settings as S
    from robust_mrc.core.journal import file_identity
    from robust_mrc.evaluation.cache import model_key
    from robust_mrc.evaluation.search_journal import SearchJournal
    from robust_mrc.models.backbone import load_tokenizer
    from robust_mrc.models.pretrained import load_model
    from robust_mrc.models.scoring import ModelScorer

    if not searches(attack):
        raise SystemExit(f"attack {attack.name!r} has no model-in-the-loop search: drop ckpt=")
    module = load_model(str(cfg["ckpt"]), S.complete_task({"name": task}))  # a checkpoint, or a Hugging Face model
    scorer = ModelScorer(
        module,
        load_tokenizer(module.model_cfg),
        model_key(cfg["ckpt"]),
        int(cfg["batch_size"]),
        str(cfg["precision"]),
    )
    data = Path(str(cfg["data"]))
    settings = {
        "ckpt": file_identity(cfg["ckpt"]) if Path(str(cfg["ckpt"])).is_file() else model_key(cfg["ckpt"]),
        "data": file_identity(data) if data.is_file() else str(cfg["data"]),
        "limit": limit,
        "attack": attack.name,
        "params": json.loads(json.dumps(params, default=str)),
        "seed": seed,
        "epoch": epoch,
        "precision": str(cfg["precision"]),
    }
    journal = SearchJournal(str(cfg["out"]) + ".partial.jsonl", settings)
    try:
        result, stats = run_search(attack, examples, scorer, seed, epoch, finished=journal.resume(), on_group=journal.add)
    finally:
        journal.close()
    changed = [a is not e for a, e in zip(result.examples, examples)]
    info = {
        "ckpt": str(cfg["ckpt"]),
        "queries": stats.queries,
        "seconds": round(stats.seconds, 2),
        "queries_per_second": round(stats.queries_per_second, 1),
        "queries_per_example": round(stats.queries / max(1, len(examples)), 1),
        "scorer_key": scorer.key,
    }
    return list(zip(result.examples, changed)), info, journal


_TASKS = ("mc", "span")


def _whole(cfg: dict, key: str, lo: int = 0, null: bool = False, null_means: str = "all") -> int | None:
    """``cfg[key]``, a whole number ``>= lo`` (the mapping form may spell it as text: ``"3"``), or
    None for null where ``null`` allows it (``null_means``: what null stands for, in the error);
    else a one-line error naming the key."""
    value = cfg[key]
    if null and value in (None, "", "null"):
        return None
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < lo:
        raise SystemExit(f"{key}={value!r}: expected a whole number >= {lo}" + (f" or null ({null_means})" if null else ""))
    return value


def _flag(cfg: dict, key: str) -> bool:
    """``cfg[key]`` as true or false (the mapping form may spell it as text); else a one-line error."""
    value = cfg[key]
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise SystemExit(f"{key}={value!r}: expected true or false")


def _task_of(cfg: dict, examples) -> str:
    """The task of ``examples``; ``task=`` must be it when given."""
    found = "mc" if isinstance(examples[0], MCExample) else "span"
    if cfg["task"] not in (None, found):
        raise SystemExit(
            f"task={cfg['task']}: data={cfg['data']} holds {found} examples ({type(examples[0]).__name__}s); "
            f"give task={found} or leave task= out"
        )
    return found


def _check_outputs(paths: list) -> None:
    """Every file the command will write, writable (a probe file in its directory), before any work."""
    from robust_mrc.data.writers import check_writable

    for path in paths:
        check_writable(Path(str(path)))


def _load_and_build(cfg: dict, params: dict, sample: int | None = None):
    """``(examples, task, attack, (seed, epoch, limit), pool)`` of an ``apply`` / ``stats`` command
    (its own keys ``cfg`` and the attack's parameters ``params``): the examples of ``data=`` and the
    attack prepared on them with ``pool``, the examples beside it: those of ``pool_data=`` (the first
    ``pool_limit``), else the input data itself (a pool attack without ``pool=`` draws options from
    them, never the same passage; a bank attack trains on them and makes its bank for the input).
    ``sample``: keep ``random.Random(sample_seed).sample`` of that many examples (all when fewer)."""
    from robust_mrc.data.readers import load_examples
    from robust_mrc.jobs.extractor import distractor_banks

    seed, epoch = _whole(cfg, "seed"), _whole(cfg, "epoch")
    limit, pool_limit = _whole(cfg, "limit", null=True), _whole(cfg, "pool_limit", null=True)
    strict = _flag(cfg, "strict")
    if cfg["task"] not in (None, *_TASKS):
        raise SystemExit(f"task={cfg['task']!r}: expected one of {', '.join(_TASKS)} or null (the data's)")
    examples = load_examples(cfg["data"], limit=limit, strict=strict)
    if not len(examples):
        raise SystemExit(f"{cfg['data']}: no examples")
    if sample is not None:
        examples = random.Random(_whole(cfg, "sample_seed")).sample(list(examples), min(sample, len(examples)))
    task = _task_of(cfg, examples)
    pool = list(examples)
    if cfg["pool_data"]:
        pool = list(load_examples(cfg["pool_data"], limit=pool_limit, strict=strict))
        if pool and type(pool[0]) is not type(examples[0]):
            raise SystemExit(
                f"pool_data={cfg['pool_data']} holds {type(pool[0]).__name__}s, data={cfg['data']} {type(examples[0]).__name__}s"
            )
    try:
        attack = build_attack(
            {"name": cfg["attack"], "params": params}, task, pool_examples=pool, targets=list(examples), banks=distractor_banks()
        )
    except (AttackSpecError, AttackUnavailable, ValueError, FileNotFoundError) as exc:  # a file named by a parameter: pool=, bank=
        raise SystemExit(str(exc)) from None
    return examples, task, attack, (seed, epoch, limit), pool


def apply(cfg) -> dict:
    """``apply``: the attacked copy of ``data=`` in ``out=`` and its statistics (returned, and
    written to ``stats=`` or ``<out>.stats.json``). ``cfg``: ``robust_mrc/conf/attacks.yaml`` composed, or a
    mapping as the command line spells it (:func:`_arguments`)."""
    from robust_mrc.data.sources import SPLITS
    from robust_mrc.data.writers import WRITE_FORMATS, atomic_write_text, write_examples
    from robust_mrc.models.scoring import SEARCH_PRECISIONS  # the models (Lightning) only where a command needs them

    cfg, params = _arguments(cfg)
    for key in ("attack", "data", "out"):
        if cfg[key] is None:
            raise SystemExit(f"apply needs {key}=...  (e.g. attack=charswap data=race.jsonl out=adv.jsonl)")
    if cfg["format"] not in (None, *WRITE_FORMATS, HF):
        raise SystemExit(f"format={cfg['format']}: expected one of {', '.join((*WRITE_FORMATS, HF))} (null: the input's)")
    if cfg["split"] not in SPLITS:
        raise SystemExit(f"split={cfg['split']}: expected one of {', '.join(SPLITS)} (format=hf: the dataset's split)")
    if str(cfg["precision"]) not in SEARCH_PRECISIONS:
        raise SystemExit(f"precision={cfg['precision']}: expected one of {', '.join(SEARCH_PRECISIONS)} (the search's forward passes)")
    keep_failed = _flag(cfg, "keep_failed")
    if cfg["ckpt"]:
        cfg["batch_size"] = _whole(cfg, "batch_size", lo=1)
    _check_apply_outputs(cfg, [cfg["data"], cfg["pool_data"], params.get("pool"), params.get("bank")])
    examples, task, attack, (seed, epoch, limit), pool = _load_and_build(cfg, params)
    fmt = _output_format(cfg, examples, task)
    t0 = time.perf_counter()
    search = journal = None
    if cfg["ckpt"]:  # the model-in-the-loop search against this checkpoint
        results, search, journal = _search(attack, list(examples), cfg, task, seed, epoch, limit, params)
    else:
        results = [attack_example(attack, ex, seed, epoch) for ex in examples]
    attacked, originals, failed = [], [], 0
    for ex, (new, ok) in zip(examples, results):
        if not ok:
            failed += 1
            if not keep_failed:
                continue
        originals.append(ex)
        attacked.append(new)
    seconds = time.perf_counter() - t0
    if not attacked:
        raise SystemExit(f"the attack changed none of the {len(examples)} examples and keep_failed=false leaves them out: nothing to write")
    out = Path(cfg["out"])
    stats = attack_stats(originals, attacked, failed, seconds)
    if search is not None:
        stats["search"] = search
    stats.update(
        {
            "attack": attack.name,
            "task": task,
            "paper": attack.paper,
            "seed": seed,
            "epoch": epoch,
            "data": str(cfg["data"]),
            "limit": limit,
            "format": fmt,
            "out": str(out),
            "params": {k: (v if isinstance(v, (str, int, float, bool, type(None))) else "<object>") for k, v in params.items()},
        }
    )
    if fmt == HF:
        _export(cfg, params, stats, examples, pool, attack, originals, attacked, failed, keep_failed)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_examples(attacked, out, fmt)
    if journal is not None:
        journal.finish()
    if fmt != HF or cfg["stats"]:  # format=hf: stats.json is in the dataset's directory
        atomic_write_text(_stats_path(cfg), json.dumps(stats, indent=2) + "\n")
    return stats


def _stats_path(cfg: dict) -> Path:
    """Where ``apply`` writes its statistics: ``stats=``, else ``<out>.stats.json``."""
    return Path(str(cfg["stats"] or str(cfg["out"]) + ".stats.json"))


def _check_apply_outputs(cfg: dict, inputs: list) -> None:
    """``apply``'s outputs before any work: ``out=`` (a file, or with ``format=hf`` a new or
    exported dataset directory) and the statistics file, neither an input nor the other, both writable."""
    from robust_mrc.data.writers import output_path_problem
    from robust_mrc.export.hf_dataset import export_problem

    hf = cfg["format"] == HF or (cfg["format"] is None and detect_hf(cfg["data"]))
    if problem := export_problem(cfg["out"], inputs) if hf else output_path_problem(cfg["out"], inputs):
        raise SystemExit(problem)
    stats_file = _stats_path(cfg)
    if stats_file.expanduser().resolve() == Path(str(cfg["out"])).expanduser().resolve():
        raise SystemExit(f"stats={cfg['stats']} is the attacked file out={cfg['out']}: give another file name")
    if cfg["stats"] and (problem := output_path_problem(stats_file, inputs)):
        raise SystemExit(problem.replace("out=", "stats=", 1))
    _check_outputs([cfg["out"], stats_file])


def _output_format(cfg: dict, examples, task: str) -> str:
    """The format ``apply`` writes: ``format=``, else the input's; one that holds ``task``'s examples."""
    from robust_mrc.data.writers import WRITE_FORMATS

    fmt = cfg["format"] or {"hub_race": "race_jsonl", "hub_squad": "squad", "hf_dataset": HF}.get(examples.format, examples.format)
    fits = {"mc": [f for f in WRITE_FORMATS if f != "squad"], "span": ["squad"]}[task] + [HF]
    if fmt not in fits:
        raise SystemExit(f"format={fmt} cannot hold {task} examples (data={cfg['data']}): give format= one of {', '.join(fits)}")
    return fmt


def detect_hf(data) -> bool:
    """Whether ``data`` is a ``datasets`` dataset on disk (written out as one by default)."""
    from robust_mrc.data.readers.hf_dataset import is_dataset_source

    return is_dataset_source(Path(str(data)))


def _export(
    cfg: dict, params: dict, stats: dict, examples, pool: list, attack, originals: list, attacked: list, failed: int, keep_failed: bool
):
    """``format=hf``: ``attacked`` as a ``datasets`` dataset in the directory ``out=`` with its card
    and ``stats.json`` (:mod:`robust_mrc.export.hf_dataset`); ``stats`` gains the fingerprint, the
    counts and the checks."""
    from robust_mrc.attacks.resources import environment
    from robust_mrc.core.digests import fingerprint
    from robust_mrc.data.examples import examples_digest
    from robust_mrc.evaluation.suites import attacked_set_fingerprint
    from robust_mrc.export.hf_dataset import check_guarantees, dataset_card, write_dataset
    from robust_mrc.papers import PAPERS

    task, seed, epoch = stats["task"], stats["seed"], stats["epoch"]
    env = environment()
    scorer_key = stats["search"]["scorer_key"] if cfg["ckpt"] else None
    key = attacked_set_fingerprint(
        list(examples), str(cfg["attack"]), params, seed, task, pool_digest=examples_digest(pool), resource_env=env, scorer_key=scorer_key
    )
    pool_source = f"pool_data={cfg['pool_data']}" if cfg["pool_data"] else "the input data"
    note = (
        "robust-mrc's content fingerprint of this set (the clean examples, the attack and its parameters as given, a file they "
        "name by its content, the seed, the pool, the task, the language resources, the attack code). An evaluation of the same "
        f"examples with seed={seed} and the suite set `{{name: {cfg['attack']}, params: {json.dumps(params, default=str)}}}` "
        f"makes the same set under this key (its cache entry; report.json: sets.<name>.fingerprint) when its pool, the "
        f"training split (else the evaluated one), is this one's: {pool_source}."
    )
    if epoch:
        key = fingerprint("epoch", epoch, key)
        note += f" Here epoch={epoch}, a training epoch's copies; an evaluation attacks with epoch 0, so no evaluation set has this key."
    if failed and not keep_failed:
        key = fingerprint("unchanged left out", key)
        note += " Here the examples the attack could not change are left out (keep_failed=false): no evaluation set has this key."
    if cfg["ckpt"]:
        note += (
            " A model-in-the-loop set: keyed by the checkpoint file; an evaluation keys its search by its predictor "
            "(the checkpoint and its task settings), so its key differs."
        )
    cites = [c.strip() for c in attack.paper.split(";") if c.strip()]
    by_cite = {p.cite: p for p in PAPERS.values()}
    papers = [
        {"cite": c, "title": by_cite[c].title, "venue": by_cite[c].venue, "url": by_cite[c].url}
        if c in by_cite
        else {"cite": c, "title": c, "venue": "", "url": ""}
        for c in cites
    ]
    data = Path(str(cfg["data"]))
    meta = {
        "title": f"{data.parent.name}/{data.name} ({cfg['split']}) attacked by {attack.name} (robust-mrc)",
        "name": Path(str(cfg["out"])).name,
        "task": task,
        "split": cfg["split"],
        "source": {"data": str(cfg["data"]), "format": examples.format, "examples": len(examples), "limit": stats.get("limit")},
        "pool": (
            f"`{cfg['pool_data']}`, {len(pool)} examples" + (f" (the first {cfg['pool_limit']})" if cfg["pool_limit"] else "")
            if cfg["pool_data"]
            else f"the input data itself, {len(pool)} examples"
        ),
        "attack": {
            "name": attack.name,
            "method": attack.method,
            "description": attack.description,
            "papers": papers,
            "params": {k: v for k, v in attack.params.items() if not k.startswith("_")},
            "given": sorted(params),
        },
        "resources": attack.resources(),
        "environment": env,
        "seed": seed,
        "epoch": epoch,
        "fingerprint": key,
        "fingerprint_note": note,
        "counts": {
            "examples": len(attacked),
            "changed": stats["changed"],
            "unchanged": failed if keep_failed else 0,
            "dropped": 0 if keep_failed else failed,
        },
        "search": stats.get("search"),
        "command": _command(cfg, params),
    }
    stats.update({"fingerprint": key, "split": cfg["split"], "resources": meta["resources"], "environment": env})

    def files(rows: list[dict], sha256: str) -> dict[str, str]:
        stats["checks"] = check_guarantees(originals, rows, task)
        stats["parquet_sha256"] = sha256
        return {
            "README.md": dataset_card(meta, rows, stats["checks"], sha256),
            "stats.json": json.dumps(stats, indent=2, default=str) + "\n",
        }

    write_dataset(attacked, cfg["out"], split=cfg["split"], files=files)


def _command(cfg: dict, params: dict) -> str:
    """The ``apply`` command line that makes the set again (the keys that differ from the defaults)."""
    import shlex

    own = own_defaults()
    args = [f"{k}={cfg[k]}" for k in ("attack", "data", "out")] + ["format=hf"]
    args += [f"{k}={cfg[k]}" for k in own if k not in ("attack", "data", "out", "format", "stats") and str(cfg[k]) != str(own[k])]
    args += [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in params.items()]
    return "robust-mrc attacks apply " + " ".join(shlex.quote(a) for a in args)


def stats(cfg) -> dict:
    """``stats``: :func:`robust_mrc.attacks.fidelity.fidelity_stats` of ``attack=`` on ``data=``
    (``cfg`` as for :func:`apply`)."""
    from robust_mrc.attacks.fidelity import fidelity_stats
    from robust_mrc.data.writers import atomic_write_text, output_path_problem

    cfg, params = _arguments(cfg)
    for key in ("attack", "data"):
        if cfg[key] is None:
            raise SystemExit(f"stats needs {key}=...  (e.g. attack=addsent data=race.jsonl limit=150)")
    if cfg["out"] and (problem := output_path_problem(cfg["out"], [cfg["data"]])):
        raise SystemExit(problem)
    if cfg["out"]:
        _check_outputs([cfg["out"]])
    sample = _whole(cfg, "sample", lo=1, null=True)
    examples, _task, attack, (seed, epoch, limit), _pool = _load_and_build(cfg, params, sample)
    result = {"data": str(cfg["data"]), "limit": limit, "seed": seed}
    if sample is not None:
        result.update(sample=len(examples), sample_seed=_whole(cfg, "sample_seed"))
    t0 = time.perf_counter()
    result.update(fidelity_stats(attack, list(examples), seed, epoch))
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if cfg["out"]:
        atomic_write_text(Path(cfg["out"]), json.dumps(result, indent=2) + "\n")
    return result


def audit(cfg) -> dict:
    """``audit``: the blinded judging sheet of ``attack=`` on ``data=`` in the directory ``out=``
    (:func:`robust_mrc.attacks.audit.draw_sample`, :func:`~robust_mrc.attacks.audit.write_audit`);
    returns its summary. ``cfg`` as for :func:`apply`."""
    from robust_mrc.attacks.audit import audit_dir_problem, audit_files, draw_sample, write_audit

    cfg, params = _arguments(cfg)
    for key in ("attack", "data", "out"):
        if cfg[key] is None:
            raise SystemExit(f"audit needs {key}=...  (e.g. attack=addsent data=race.jsonl n=50 seed=7 out=audit/)")
    if cfg["ckpt"]:
        raise SystemExit(f"ckpt={cfg['ckpt']}: audit runs the attack without a model (apply with ckpt= makes a searched set)")
    n, controls = _whole(cfg, "n", lo=1), _whole(cfg, "controls", null=True, null_means="10 % of n, at least 5")
    if problem := audit_dir_problem(cfg["out"]):
        raise SystemExit(problem)
    _check_outputs(audit_files(cfg["out"]))
    examples, _task, attack, (seed, epoch, limit), _pool = _load_and_build(cfg, params)
    sample = draw_sample(attack, list(examples), n, seed, controls, epoch)
    meta = {"data": str(cfg["data"]), "limit": limit, "given": params, "command": _audit_command(cfg, params)}
    return write_audit(sample, cfg["out"], meta)


def _audit_command(cfg: dict, params: dict) -> str:
    """The ``audit`` command line that draws the same sheet again (the keys that differ from the defaults)."""
    import shlex

    own = own_defaults()
    args = [f"{k}={cfg[k]}" for k in ("attack", "data") if cfg[k] is not None]
    args += [f"{k}={cfg[k]}" for k in own if k not in ("attack", "data", "out") and str(cfg[k]) != str(own[k])]
    args += [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in params.items()]
    return "robust-mrc attacks audit " + " ".join(shlex.quote(a) for a in args + ["out=NEW_DIR"])


def score(cfg) -> dict:
    """``audit score``: the table of the filled ``sheet=`` with its ``key=`` (default: the key
    beside it), written beside the sheet (:func:`robust_mrc.attacks.audit.write_score`); returns it
    with ``markdown`` and the paths written."""
    from robust_mrc.attacks.audit import score_markdown, score_sheet, write_score

    cfg, params = _arguments(cfg)
    if params:
        raise SystemExit(f"audit score takes sheet= and key=, not {', '.join(sorted(params))}")
    if cfg["sheet"] is None:
        raise SystemExit("audit score needs sheet=...  (the filled sheet.csv; key= defaults to key.json beside it)")
    table = score_sheet(cfg["sheet"], cfg["key"])
    md, js = write_score(table, cfg["sheet"])
    return {**table, "markdown": score_markdown(table), "written": [str(md), str(js)]}


def _attack_help(name, task) -> str:
    """The declared parameters of the attack ``name`` (for ``task``, or the tasks that have it); ""
    without a name. In ``robust_mrc/conf/attacks.yaml``'s help as ``${attack_parameters:...}``."""
    from robust_mrc.attacks.base import _REGISTRY

    if name is None:
        return ""
    tasks = [task] if task else ["mc", "span"]
    lines = []
    for task in tasks:
        cls = _REGISTRY.get((name, task))
        if cls is None:
            continue
        lines.append(f"\n{name} ({task}, {cls.paper}): {cls.description}")
        params = {k: v for k, v in cls.defaults().items() if not k.startswith("_")}
        width = max((len(k) for k in params), default=0)
        lines += [f"    {k:<{width}} = {v!r}" for k, v in params.items()] or ["    (no parameters)"]
    if not lines:
        available = sorted({n for n, _ in _REGISTRY})
        lines = [f"\nunknown attack {name!r}; available: {', '.join(available)}"]
    return "\n".join(lines).replace("$", "$$")  # Hydra's help is a string.Template


def hydra_arguments(args: list[str]) -> list[str]:
    """The command line after the verb as ``robust_mrc/conf/attacks.yaml`` reads it: an own key's ``KEY=VALUE``
    as ``args.KEY=VALUE``, any other ``KEY=VALUE`` as the attack's parameter ``++params.KEY=VALUE``
    (``~KEY``: ``~params.KEY``), ``help`` as ``--help``; Hydra's flags and ``hydra.*``, ``args.*``
    overrides as they are."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    own = set(own_defaults())
    parser = OverridesParser.create()
    out = []
    for arg in args:
        if arg in _HELP_FLAGS or arg.startswith("-"):
            out.append("--help" if arg in _HELP_FLAGS else arg)
            continue
        try:
            override = parser.parse_override(arg)
        except HydraException:
            out.append(arg)  # not an override (or a flag's value): Hydra names the problem
            continue
        root = override.key_or_group.split(".", 1)[0]
        bare = arg.lstrip("+~")
        if root in ("hydra", "args") or (root == "params" and override.is_delete()):
            out.append(arg)
        elif root in own:
            out.append(arg[: len(arg) - len(bare)] + "args." + bare)
        elif override.is_delete():
            out.append("~params." + bare)
        else:
            out.append("++" + (bare if root == "params" else "params." + bare))
    return out


def _run(command: str, cfg: DictConfig) -> None:
    if command == "list":
        rows = list_attacks(cfg.args.task)
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            print(f"{r['task']:<5} {r['name']:<{width}}  {r['method']:<8}  {r['paper']:<38} {r['description']}")
    elif command == "apply":
        print(json.dumps(apply(cfg), indent=2))
    elif command == "audit":
        print(json.dumps(audit(cfg), indent=2, ensure_ascii=False))
    elif command == SCORE:
        table = score(cfg)
        print(table["markdown"] + f"Written: {', '.join(table['written'])}")
    else:
        print(json.dumps(stats(cfg), indent=2))


def _main(argv: list[str]) -> None:
    from robust_mrc.cli.common import hydra_command

    command, rest = (argv[0], argv[1:]) if argv else ("--help", [])
    if command in _HELP_FLAGS:  # the usage of every command
        command, rest = "", ["--help"]
    elif command not in COMMANDS:
        hint = " (--help for any)" if any(a in _HELP_FLAGS for a in rest) else ""
        raise SystemExit(f"unknown command {command!r}; use `list`, `apply`, `stats` or `audit`{hint}")
    if command == "audit" and rest[:1] == [SCORE]:
        command, rest = SCORE, rest[1:]
    if not OmegaConf.has_resolver("attack_parameters"):
        OmegaConf.register_new_resolver("attack_parameters", _attack_help)
    hydra_command(functools.partial(_run, command), "attacks", hydra_arguments(rest))


def main(argv: list[str] | None = None) -> int:
    """``robust-mrc attacks list|apply|stats|audit KEY=VALUE ...``; a mistake: ``Error: ...``
    (one line) and exit status 1."""
    from robust_mrc.cli.common import run_command

    try:
        run_command(_main, list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exit_:
        if isinstance(exit_.code, str):  # a mistake this command names (apply's, stats')
            raise SystemExit(f"Error: {exit_.code}") from None
        raise
    return 0
