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
``stats=``). Any other ``KEY=VALUE`` is a parameter of the attack, e.g.
``question_only=true``, ``pool=options.txt``, ``bank=de.jsonl``, ``position=random``. Attacks that
need a pool of options (magnet, extra_option, distractor_generation) get the input data itself
when no ``pool=`` is given (never the same passage). With ``ckpt=`` an attack that can use a model
(span ``addsent``/``addonesent``/``addsentmod``: the worst candidate; ``addany``, ``addcommon``: local
search) runs its search against that checkpoint (``batch_size=`` examples per forward pass,
``precision=bf16`` for bfloat16 autocast: faster on CPUs with AVX512-BF16) and the
statistics add the model queries and queries per second.

The command runs under ``@hydra.main`` with ``conf/attacks.yaml`` (``--help``, ``--cfg job``): the
verb is the first argument, the command's own keys are ``args.KEY`` and the attack's parameters
``params.KEY`` (:func:`hydra_arguments` spells the command line so), values as Hydra reads them
(``true``, ``0.25``, ``[a,b]``, ``null``). A mistake prints one line, ``Error: ...``.
"""

from __future__ import annotations

import difflib
import functools
import json
import sys
import time
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from robust_mrc.attacks import list_attacks
from robust_mrc.attacks.apply import AttackSpecError, attack_example, build_attack
from robust_mrc.attacks.base import AttackUnavailable
from robust_mrc.data.examples import MCExample
from robust_mrc.models.scoring import SEARCH_PRECISIONS

CONF = Path(__file__).resolve().parents[2] / "conf"
COMMANDS = ("list", "apply", "stats")
_HELP_FLAGS = ("-h", "--help", "help")


def own_defaults() -> dict:
    """The command's own keys and their defaults: ``args`` of ``conf/attacks.yaml``."""
    return OmegaConf.to_container(OmegaConf.load(CONF / "attacks.yaml").args)


def _arguments(cfg) -> tuple[dict, dict]:
    """``(own keys, attack parameters)`` of ``cfg``: ``conf/attacks.yaml`` composed (``args``,
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


def _search(attack, examples: list, cfg: dict, task: str, seed: int, epoch: int, limit: int | None, params: dict):
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
        int(cfg["batch_size"]),
        str(cfg["precision"]),
    )
    data = Path(str(cfg["data"]))
    settings = {
        "ckpt": file_identity(cfg["ckpt"]),
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
    }
    return list(zip(result.examples, changed)), info, journal


def _load_and_build(cfg: dict, params: dict):
    """``(examples, task, attack, (seed, epoch, limit))`` of an ``apply`` / ``stats`` command (its own
    keys ``cfg`` and the attack's parameters ``params``): the examples of ``data=`` and the attack
    prepared on them (a pool attack without ``pool=`` draws from the input data itself, never the
    same passage; a bank attack makes its bank for them)."""
    from robust_mrc.data.readers import load_examples

    try:
        seed, epoch = int(cfg["seed"]), int(cfg["epoch"])
        limit = int(cfg["limit"]) if cfg["limit"] not in (None, "", "null") else None
    except ValueError as exc:
        raise SystemExit(f"seed, epoch and limit are whole numbers: {exc}") from None
    examples = load_examples(cfg["data"], limit=limit, strict=str(cfg["strict"]).lower() != "false")
    if not len(examples):
        raise SystemExit(f"{cfg['data']}: no examples")
    task = cfg["task"] or ("mc" if isinstance(examples[0], MCExample) else "span")
    try:
        attack = build_attack({"name": cfg["attack"], "params": params}, task, pool_examples=list(examples), targets=list(examples))
    except (AttackSpecError, AttackUnavailable, ValueError, FileNotFoundError) as exc:  # a file named by a parameter: pool=, bank=
        raise SystemExit(str(exc)) from None
    return examples, task, attack, (seed, epoch, limit)


def apply(cfg) -> dict:
    """``apply``: the attacked copy of ``data=`` in ``out=`` and its statistics (returned, and
    written to ``stats=`` or ``<out>.stats.json``). ``cfg``: ``conf/attacks.yaml`` composed, or a
    mapping as the command line spells it (:func:`_arguments`)."""
    from robust_mrc.data.writers import atomic_write_text, output_path_problem, write_examples

    cfg, params = _arguments(cfg)
    for key in ("attack", "data", "out"):
        if cfg[key] is None:
            raise SystemExit(f"apply needs {key}=...  (e.g. attack=charswap data=race.jsonl out=adv.jsonl)")
    if problem := output_path_problem(cfg["out"], [cfg["data"], params.get("pool"), params.get("bank")]):
        raise SystemExit(problem)
    if str(cfg["precision"]) not in SEARCH_PRECISIONS:
        raise SystemExit(f"precision={cfg['precision']}: expected one of {', '.join(SEARCH_PRECISIONS)} (the search's forward passes)")
    examples, task, attack, (seed, epoch, limit) = _load_and_build(cfg, params)
    t0 = time.perf_counter()
    keep_failed = str(cfg["keep_failed"]).lower() != "false"
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
    fmt = cfg["format"] or {"hub_race": "race_jsonl", "hub_squad": "squad"}.get(examples.format, examples.format)
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
    stats_path = Path(cfg["stats"] or str(out) + ".stats.json")
    atomic_write_text(stats_path, json.dumps(stats, indent=2) + "\n")
    return stats


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
    examples, _task, attack, (seed, epoch, limit) = _load_and_build(cfg, params)
    result = {"data": str(cfg["data"]), "limit": limit, "seed": seed, **fidelity_stats(attack, list(examples), seed, epoch)}
    if cfg["out"]:
        atomic_write_text(Path(cfg["out"]), json.dumps(result, indent=2) + "\n")
    return result


def _attack_help(name, task) -> str:
    """The declared parameters of the attack ``name`` (for ``task``, or the tasks that have it); ""
    without a name. In ``conf/attacks.yaml``'s help as ``${attack_parameters:...}``."""
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
    """The command line after the verb as ``conf/attacks.yaml`` reads it: an own key's ``KEY=VALUE``
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
    else:
        print(json.dumps(stats(cfg), indent=2))


def _main(argv: list[str]) -> None:
    from robust_mrc.config.cli import hydra_command

    command, rest = (argv[0], argv[1:]) if argv else ("--help", [])
    if command in _HELP_FLAGS:  # the usage of every command
        command, rest = "", ["--help"]
    elif command not in COMMANDS:
        hint = " (--help for any)" if any(a in _HELP_FLAGS for a in rest) else ""
        raise SystemExit(f"unknown command {command!r}; use `list`, `apply` or `stats`{hint}")
    if not OmegaConf.has_resolver("attack_parameters"):
        OmegaConf.register_new_resolver("attack_parameters", _attack_help)
    hydra_command(functools.partial(_run, command), CONF, "attacks", hydra_arguments(rest))


def main(argv: list[str] | None = None) -> int:
    """``python -m robust_mrc.attacks list|apply|stats KEY=VALUE ...``; a mistake: ``Error: ...``
    (one line) and exit status 1."""
    from robust_mrc.config.cli import run_command

    try:
        run_command(_main, list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exit_:
        if isinstance(exit_.code, str):  # a mistake this command names (apply's, stats')
            raise SystemExit(f"Error: {exit_.code}") from None
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
