"""Command line: list the attacks, or write an attacked copy of a data file with its statistics.

    python -m robust_mrc.attacks list [task=mc|span]
    python -m robust_mrc.attacks apply attack=charswap data=PATH out=PATH [seed=0] [limit=N]
        [format=race_jsonl|race_original|dream|squad] [stats=PATH] [keep_failed=true] [KEY=VALUE ...]
    python -m robust_mrc.attacks apply attack=addany ckpt=RUN/checkpoints/best.ckpt data=PATH out=PATH [budget=600]
    python -m robust_mrc.attacks stats attack=addsent data=PATH [limit=150] [seed=0] [out=PATH] [KEY=VALUE ...]

``stats`` measures what the attack does to the data beside its paper's published figures
(:mod:`robust_mrc.attacks.fidelity`: AddSent's "not" share, synonym and name replacements, CharSwap's
share of words altered, DE's overlap with the answer) and prints them as JSON (``out=``: also written).

``data=`` is a file the readers load (format detected); the attacked set is written in the input's
own format (or ``format=``), with examples the attack cannot change kept as they are
(``keep_failed=false`` drops them), and a JSON of statistics beside it (``OUT.stats.json`` or
``stats=``). Any other ``KEY=VALUE`` is a parameter of the attack (values read as YAML), e.g.
``question_only=true``, ``pool=options.txt``, ``bank=de.jsonl``, ``position=random``. Attacks that
need a pool of options (magnet, extra_option, distractor_generation) get the input data itself
when no ``pool=`` is given (never the same passage). With ``ckpt=`` an attack that can use a model
(span ``addsent``/``addonesent``/``addsentmod``: the worst candidate; ``addany``, ``addcommon``: local
search) runs its search against that checkpoint (``batch_size=`` examples per forward pass,
``precision=bf16`` for bfloat16 autocast: faster on CPUs with AVX512-BF16) and the
statistics add the model queries and queries per second.
"""

from __future__ import annotations

import difflib
import json
import sys
import time
from pathlib import Path

import yaml

from robust_mrc.attacks import list_attacks
from robust_mrc.attacks.apply import AttackSpecError, attack_example, build_attack
from robust_mrc.attacks.base import AttackUnavailable
from robust_mrc.data.examples import MCExample
from robust_mrc.models.scoring import SEARCH_PRECISIONS

_OWN_KEYS = {
    "attack",
    "data",
    "out",
    "seed",
    "epoch",
    "limit",
    "format",
    "stats",
    "keep_failed",
    "task",
    "strict",
    "ckpt",
    "batch_size",
    "precision",
}


def _parse(args: list[str]) -> dict:
    out = {}
    for a in args:
        if "=" not in a:
            raise SystemExit(f"expected KEY=VALUE, got {a!r} (see --help)")
        k, v = a.split("=", 1)
        out[k.strip()] = v
    return out


def _fields(ex) -> dict[str, str]:
    if isinstance(ex, MCExample):
        return {"passage": ex.passage, "question": ex.question, "options": " ".join(ex.options)}
    return {"passage": ex.context, "question": ex.question}


def _words(text: str) -> list[str]:
    return text.split()


def attack_stats(originals, attacked, failed: int, seconds: float | None = None) -> dict:
    """Share of examples changed, share of words altered, length change, number not attackable."""
    n = len(originals)
    changed = altered = total = added = 0
    lens_before: dict[str, float] = {}
    lens_after: dict[str, float] = {}
    for o, a in zip(originals, attacked):
        fo, fa = _fields(o), _fields(a)
        if fo != fa or (isinstance(o, MCExample) and o.label != a.label):
            changed += 1
        for key in fo:
            wo, wa = _words(fo[key]), _words(fa[key])
            lens_before[key] = lens_before.get(key, 0) + len(wo)
            lens_after[key] = lens_after.get(key, 0) + len(wa)
            total += len(wo)
            if wo == wa:
                continue
            sm = difflib.SequenceMatcher(None, wo, wa, autojunk=False)
            for tag, i1, i2, j1, j2 in sm.get_opcodes():
                if tag in ("replace", "delete"):
                    altered += i2 - i1
                if tag in ("replace", "insert"):
                    added += max(0, (j2 - j1) - (i2 - i1))
    mean = lambda d: {k: round(v / max(n, 1), 2) for k, v in d.items()}  # noqa: E731
    stats = {
        "examples": n,
        "changed": changed,
        "share_changed": round(changed / max(n, 1), 4),
        "not_attackable": failed,
        "share_words_altered": round(altered / max(total, 1), 4),
        "words_added_per_example": round(added / max(n, 1), 2),
        "mean_words_before": mean(lens_before),
        "mean_words_after": mean(lens_after),
        "length_change": {k: round((lens_after[k] - lens_before[k]) / max(n, 1), 2) for k in lens_before},
        "word_unit": "white-space separated tokens",
    }
    if seconds is not None:
        stats["seconds"] = round(seconds, 2)
        stats["examples_per_second"] = round(n / max(seconds, 1e-9), 1)
    return stats


def _search(attack, examples: list, cfg: dict, task: str, seed: int, epoch: int, params: dict):
    """``[(example, changed)]``, query statistics of ``attack``'s search against ``ckpt=``, and the
    search's journal (``<out>.partial.jsonl``: run again after a crash, the search goes on from its
    last finished group; remove it with ``finish()`` once ``out`` is written)."""
    from robust_mrc.attacks.search import run_search, searches
    from robust_mrc.core.journal import file_identity
    from robust_mrc.evaluation.cache import checkpoint_key
    from robust_mrc.evaluation.search_journal import SearchJournal
    from robust_mrc.models.backbone import load_tokenizer
    from robust_mrc.models.checkpoints import load_checkpoint
    from robust_mrc.models.scoring import ModelScorer

    if not searches(attack):
        raise SystemExit(f"attack {attack.name!r} has no model-in-the-loop search: drop ckpt=")
    module = load_checkpoint(cfg["ckpt"], expected_task=task)
    scorer = ModelScorer(
        module,
        load_tokenizer(module.model_cfg),
        checkpoint_key(cfg["ckpt"]),
        int(cfg.get("batch_size", 32)),
        cfg.get("precision", "32"),
    )
    data = Path(str(cfg["data"]))
    settings = {
        "ckpt": file_identity(cfg["ckpt"]),
        "data": file_identity(data) if data.is_file() else str(cfg["data"]),
        "limit": cfg.get("limit"),
        "attack": attack.name,
        "params": json.loads(json.dumps(params, default=str)),
        "seed": seed,
        "epoch": epoch,
        "precision": str(cfg.get("precision", "32")),
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
    }
    return list(zip(result.examples, changed)), info, journal


def _load_and_build(cfg: dict):
    """``(examples, task, params, attack, (seed, epoch, limit))`` of an ``apply`` / ``stats`` command:
    the examples of ``data=`` and the attack prepared on them (a pool attack without ``pool=`` draws
    from the input data itself, never the same passage; a bank attack makes its bank for them)."""
    from robust_mrc.data.readers import load_examples

    try:
        seed, epoch = int(cfg.get("seed", 0)), int(cfg.get("epoch", 0))
        limit = int(cfg["limit"]) if cfg.get("limit") not in (None, "", "null") else None
    except ValueError as exc:
        raise SystemExit(f"seed, epoch and limit are whole numbers: {exc}") from None
    examples = load_examples(cfg["data"], limit=limit, strict=str(cfg.get("strict", "true")).lower() != "false")
    if not len(examples):
        raise SystemExit(f"{cfg['data']}: no examples")
    task = cfg.get("task") or ("mc" if isinstance(examples[0], MCExample) else "span")
    params = {k: yaml.safe_load(v) for k, v in cfg.items() if k not in _OWN_KEYS}
    try:
        attack = build_attack({"name": cfg["attack"], "params": params}, task, pool_examples=list(examples), targets=list(examples))
    except (AttackSpecError, AttackUnavailable, ValueError) as exc:
        raise SystemExit(str(exc)) from None
    return examples, task, params, attack, (seed, epoch, limit)


def apply(cfg: dict) -> dict:
    from robust_mrc.data.writers import atomic_write_text, output_path_problem, write_examples

    for key in ("attack", "data", "out"):
        if key not in cfg:
            raise SystemExit(f"apply needs {key}=...  (e.g. attack=charswap data=race.jsonl out=adv.jsonl)")
    if problem := output_path_problem(cfg["out"], [cfg["data"], cfg.get("pool"), cfg.get("bank")]):
        raise SystemExit(problem)
    if str(cfg.get("precision", "32")) not in SEARCH_PRECISIONS:
        raise SystemExit(f"precision={cfg['precision']}: expected one of {', '.join(SEARCH_PRECISIONS)} (the search's forward passes)")
    examples, task, params, attack, (seed, epoch, _) = _load_and_build(cfg)
    t0 = time.perf_counter()
    keep_failed = str(cfg.get("keep_failed", "true")).lower() != "false"
    search = journal = None
    if cfg.get("ckpt"):  # the model-in-the-loop search against this checkpoint
        results, search, journal = _search(attack, list(examples), cfg, task, seed, epoch, params)
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
    fmt = cfg.get("format") or {"hub_race": "race_jsonl", "hub_squad": "squad"}.get(examples.format, examples.format)
    out = Path(cfg["out"])
    out.parent.mkdir(parents=True, exist_ok=True)
    write_examples(attacked, out, fmt)
    if journal is not None:
        journal.finish()
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
            "format": fmt,
            "out": str(out),
            "params": {k: (v if isinstance(v, (str, int, float, bool, type(None))) else "<object>") for k, v in params.items()},
        }
    )
    stats_path = Path(cfg.get("stats") or str(out) + ".stats.json")
    atomic_write_text(stats_path, json.dumps(stats, indent=2) + "\n")
    return stats


def stats(cfg: dict) -> dict:
    """``stats``: :func:`robust_mrc.attacks.fidelity.fidelity_stats` of ``attack=`` on ``data=``."""
    from robust_mrc.attacks.fidelity import fidelity_stats
    from robust_mrc.data.writers import atomic_write_text, output_path_problem

    for key in ("attack", "data"):
        if key not in cfg:
            raise SystemExit(f"stats needs {key}=...  (e.g. attack=addsent data=race.jsonl limit=150)")
    if cfg.get("out") and (problem := output_path_problem(cfg["out"], [cfg["data"]])):
        raise SystemExit(problem)
    examples, _task, _params, attack, (seed, epoch, limit) = _load_and_build(cfg)
    result = {"data": str(cfg["data"]), "limit": limit, "seed": seed, **fidelity_stats(attack, list(examples), seed, epoch)}
    if cfg.get("out"):
        atomic_write_text(Path(cfg["out"]), json.dumps(result, indent=2) + "\n")
    return result


_HELP_FLAGS = ("-h", "--help", "help")

LIST_HELP = """python -m robust_mrc.attacks list [task=mc|span]

One line per registered attack: task, name, method (paper: the paper's method; stand-in: a
model-free substitute under its own name), paper, description. `task=` keeps one task's."""

APPLY_HELP = """python -m robust_mrc.attacks apply attack=NAME data=PATH out=PATH [task=mc|span] [seed=0] [epoch=0]
    [limit=N] [format=race_jsonl|race_original|dream|squad] [stats=PATH] [keep_failed=true]
    [strict=true] [ckpt=RUN/checkpoints/best.ckpt] [batch_size=32] [precision=32|bf16] [PARAM=VALUE ...]

Writes an attacked copy of DATA to OUT (the input's format, or format=) and OUT.stats.json.
PARAM=VALUE sets a declared parameter of the attack (values read as YAML);
`apply attack=NAME --help` lists them with their defaults."""


def _attack_help(cfg: dict) -> str:
    """The declared parameters of ``attack=`` (for ``task=`` or the tasks that have it)."""
    from robust_mrc.attacks.base import _REGISTRY

    name = cfg.get("attack")
    tasks = [cfg["task"]] if cfg.get("task") else ["mc", "span"]
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
        return f"\nunknown attack {name!r}; available: {', '.join(available)}"
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in _HELP_FLAGS:
        print(__doc__)
        return 0
    if any(a in _HELP_FLAGS for a in argv[1:]):
        rest = _parse([a for a in argv[1:] if a not in _HELP_FLAGS])
        if argv[0] == "list":
            print(LIST_HELP)
        elif argv[0] == "stats":
            print(__doc__)
        elif argv[0] == "apply":
            print(APPLY_HELP + (_attack_help(rest) if rest.get("attack") else ""))
        else:
            raise SystemExit(f"unknown command {argv[0]!r}; use `list`, `apply` or `stats` (--help for any)")
        return 0
    cmd, cfg = argv[0], _parse(argv[1:])
    if cmd == "list":
        rows = list_attacks(cfg.get("task"))
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            print(f"{r['task']:<5} {r['name']:<{width}}  {r['method']:<8}  {r['paper']:<38} {r['description']}")
        return 0
    if cmd == "apply":
        print(json.dumps(apply(cfg), indent=2))
        return 0
    if cmd == "stats":
        print(json.dumps(stats(cfg), indent=2))
        return 0
    raise SystemExit(f"unknown command {cmd!r}; use `list`, `apply` or `stats`")


if __name__ == "__main__":
    sys.exit(main())
