"""Training policy x test set: the layout of Si et al. 2021 (AdvRACE), Table 6, from finished runs.

A directory is a training run (``metrics.json`` and ``config.yaml``, written by ``train``) or an
evaluation (``report.json``, written by ``evaluate``: one row per evaluated model, named by the
attack policy its checkpoint was trained with, read from the training run's ``config.yaml``). A
row per training run (the evaluation directories of one checkpoint join in its row; two runs of
one policy are told apart by their seeds and followed by their mean and range over seeds; two runs
of one policy *and* seed by their run directories, with no mean), a column per evaluation set
(clean first, then each attack, then the average over attacks, then the cue probes an evaluation
report marks: shown like the attacks, never in their average), values of one metric (``acc`` for
multiple choice, ``f1`` / ``em`` for span QA) from one stage (``test``, or ``val`` when a run has
no test metrics); ``--ci`` adds the 95 % bootstrap interval an evaluation report holds;
``--against ROW`` adds a table of each row minus that one, per set, with a paired bootstrap
interval over the questions both were evaluated on (from the evaluations' prediction records).

    robust-mrc compare outputs/clean outputs/addsent outputs/mix --out table6.md
    robust-mrc compare outputs/eval/clean outputs/eval/mix --ci --against "none s1"

One table holds one task: runs of multiple choice and span QA (different metrics) are refused
together. A mistake (a directory that is no run, a damaged ``report.json`` / ``metrics.json`` /
``config.yaml``, a row ``--against`` does not know) is one line, ``Error: ...``, exit status 1
(``--debug``: its traceback).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from omegaconf import OmegaConf

from robust_mrc.core.errors import UserError
from robust_mrc.core.json_input import read_json_file
from robust_mrc.data.writers import atomic_write_bytes, check_writable
from robust_mrc.reports.html import GENERATOR
from robust_mrc.reports.robustness import what_ran
from robust_mrc.reports.tables import format_table


class CompareError(UserError, ValueError):
    """A directory or file the comparison cannot use; the message names it."""


@dataclass
class SetResult:
    """One set's results in one run at one stage: its metrics (``acc``, ``f1``, ...), their 95 %
    intervals (evaluation reports), where its per-question records lie and which scorer reads them,
    and whether the evaluation marked it as a cue probe."""

    metrics: dict[str, float] = field(default_factory=dict)
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    records: Path | None = None
    scorer: str = "squad_v1"
    probe: bool = False


@dataclass
class RunResult:
    """A row of the comparison: what trained the model (``name``), its task, the run directory's
    name (``label``) and its results per stage (``val`` / ``test``) and set (``clean`` and the
    attacked sets)."""

    name: str
    task: str
    label: str
    stages: dict[str, dict[str, SetResult]] = field(default_factory=dict)

    @classmethod
    def from_metrics(cls, name: str, task: str, metrics: dict, label: str | None = None) -> RunResult:
        """The results of a training run's ``metrics.json`` (``val/acc``, ``test/addsent/acc``, ...;
        other keys are not results of a set)."""
        run = cls(name, task, label if label is not None else name)
        for key, value in metrics.items():
            parts = str(key).split("/")
            if len(parts) not in (2, 3) or not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            stage, set_name, metric = (parts[0], "clean", parts[1]) if len(parts) == 2 else parts
            run.set(stage, set_name).metrics[metric] = value
        return run

    def set(self, stage: str, set_name: str) -> SetResult:
        """The results of ``set_name`` at ``stage`` (made empty when missing)."""
        return self.stages.setdefault(stage, {}).setdefault(set_name, SetResult())

    def sets(self, stage: str) -> dict[str, SetResult]:
        return self.stages.get(stage, {})

    def stage_of(self, metric: str, stage: str | None = None) -> str:
        """``stage``, else ``test`` when the run has a clean test ``metric``, else ``val``."""
        return stage or ("test" if metric in self.sets("test").get("clean", SetResult()).metrics else "val")

    def records_stage(self) -> str:
        return "test" if self.stages.get("test") else "val"

    def merge(self, other: RunResult) -> None:
        """``other``'s sets join these (a set in both: ``other``'s wins)."""
        for stage, sets in other.stages.items():
            self.stages.setdefault(stage, {}).update(sets)


def _read_json(path: Path, what: str) -> dict:
    """The JSON object in ``path``, the ``what`` of a run; a :class:`CompareError` naming the file
    when it cannot be read or holds no JSON object."""
    value = read_json_file(path, CompareError, damaged=what)
    if not isinstance(value, dict):
        raise CompareError(f"{path}: damaged {what}: a JSON {type(value).__name__} where an object is expected")
    return value


def _read_config(path: Path):
    """A run's ``config.yaml``; a :class:`CompareError` naming it when it is not YAML."""
    try:
        cfg = OmegaConf.load(path)
    except Exception as err:  # noqa: BLE001 - YAML's and OmegaConf's errors alike: a damaged file
        raise CompareError(f"{path}: damaged config.yaml: {str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
    if not OmegaConf.is_dict(cfg):
        raise CompareError(f"{path}: damaged config.yaml: not a mapping of settings")
    return cfg


def _training_name(ckpt: str | None, default: str) -> str:
    """``<attack policy> s<seed>`` of the training run a checkpoint comes from (its config.yaml);
    ``default`` for a Hugging Face model (a directory or hub name)."""
    if not ckpt or not ckpt.endswith(".ckpt"):
        return default
    cfg_path = Path(ckpt).parent.parent / "config.yaml"
    if not cfg_path.is_file():
        return default
    cfg = _read_config(cfg_path)
    return f"{training_recipe(cfg, default)} s{OmegaConf.select(cfg, 'seed', default='?')}"


def training_recipe(cfg, default: str) -> str:
    """What a training run's config trained with, as a row name: the attack policy, the inputs
    when not the full ones, and the training components added to it, e.g.
    ``mix + consistency kl + balance 0.5 + freelb`` (``default`` where the config names no policy)."""
    name = str(OmegaConf.select(cfg, "attack.name", default=default))
    inputs = OmegaConf.select(cfg, "task.inputs", default="full")
    if inputs not in (None, "full"):
        name += f" ({inputs})"
    consistency = OmegaConf.select(cfg, "attack.consistency", default=None)
    if consistency:
        weight = OmegaConf.select(cfg, "attack.consistency_weight", default=1.0)
        name += f" + consistency {consistency}" + ("" if weight in (None, 1, 1.0) else f" x{weight:g}")
    balance = OmegaConf.select(cfg, "attack.balance", default=0)
    if balance:
        name += f" + balance {balance:g}"
    adversary = OmegaConf.select(cfg, "embedding_adversary.method", default=None)
    if adversary:
        name += f" + {adversary}"
    return name


def read_report(run_dir: str | Path) -> dict:
    """The ``report.json`` of an evaluation directory, with the keys a comparison reads."""
    path = Path(run_dir) / "report.json"
    report = _read_json(path, "evaluation report")
    missing = [k for k in ("task", "split", "models") if k not in report]
    if missing or not isinstance(report["models"], dict):
        raise CompareError(f"{path}: damaged evaluation report: no {', '.join(missing or ['models'])} (written by evaluate.py?)")
    return report


def load_evaluation(run_dir: str | Path, ci: bool = False, report: dict | None = None) -> list[RunResult]:
    """One :class:`RunResult` per model of an evaluation directory (``report.json``, or ``report``
    already read from it), named after the training run of its checkpoint; ``ci``: with intervals."""
    report = report if report is not None else read_report(run_dir)
    stage = "val" if report["split"] == "validation" else report["split"]
    scorer = report.get("metric", "squad_v1")  # the span scorer (a report that names none: SQuAD's)
    rows = []
    for model, entry in report["models"].items():
        ckpt = entry.get("ckpt") if isinstance(entry.get("ckpt"), str) else None
        run = RunResult(_training_name(ckpt, model), report["task"], _run_label(ckpt, model))
        for set_name, m in entry["sets"].items():
            result = run.set(stage, set_name)
            for key, value in m.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    result.metrics[key] = value
                elif ci and key == "ci95":  # {metric: [lo, hi]}, or [lo, hi] of the primary metric
                    value = value if isinstance(value, dict) else {report["primary"]: value}
                    result.ci.update({k: tuple(v) for k, v in value.items()})
            # where the per-question records lie (for --against, --by-clean); cue probes
            result.probe = bool((report.get("sets") or {}).get(set_name, {}).get("probe"))
            result.records = Path(run_dir) / "predictions" / model.replace("/", "__") / f"{set_name}.json"
            result.scorer = scorer
        rows.append(run)
    return rows


def _run_label(ckpt: str | None, default: str) -> str:
    """The training run's directory name (``runs/<name>/checkpoints/best.ckpt``): tells apart two
    runs that share a policy and a seed."""
    return Path(ckpt).parent.parent.name if ckpt and ckpt.endswith(".ckpt") else default


def merge_evaluations(loaded: list[RunResult]) -> list[RunResult]:
    """One row per training run: the sets of several evaluation directories of one checkpoint
    (one run directory) join in one row (a later directory's value of a set wins)."""
    merged: dict[tuple[str, str], RunResult] = {}
    for run in loaded:
        key = (run.name, run.label)
        if key in merged:
            merged[key].merge(run)
        else:
            merged[key] = RunResult(run.name, run.task, run.label, {st: dict(sets) for st, sets in run.stages.items()})
    return list(merged.values())


def distinct_names(names: list[str], labels: list[str]) -> list[str]:
    """``names``, where two or more rows share one, followed by their ``[label]``: two runs of one
    policy and one seed (a variant of the policy, a rerun) are not two seeds, and get no mean row."""
    counts = Counter(names)
    return [f"{n} [{label}]" if counts[n] > 1 else n for n, label in zip(names, labels)]


def load_run(run_dir: str | Path) -> RunResult:
    """The results of a training run directory (``metrics.json``, named by its ``config.yaml``)."""
    run_dir = Path(run_dir)
    metrics_path = run_dir / "metrics.json"
    if not run_dir.is_dir():
        raise CompareError(f"{run_dir}: {'no such directory' if not run_dir.exists() else 'not a directory'}: give run directories")
    if not metrics_path.is_file():
        raise CompareError(
            f"{run_dir}: no metrics.json (a finished train.py run) nor report.json (an evaluate.py directory): is it a finished run?"
        )
    metrics = _read_json(metrics_path, "metrics.json")
    name, task = run_dir.name, "span" if any(str(k).endswith(("/f1", "/em")) for k in metrics) else "mc"
    if (run_dir / "config.yaml").is_file():
        cfg = _read_config(run_dir / "config.yaml")
        name = training_recipe(cfg, name)
        task = str(OmegaConf.select(cfg, "task.name", default=task))
    return RunResult.from_metrics(name, task, metrics, run_dir.name)


def comparison_rows(runs: list[tuple[str, RunResult]], metric: str, stage: str | None = None, seed_means: bool = True) -> list[dict]:
    """One row per run: ``{"training": name, "clean": x, <attack>: x, ..., "attack avg": x, <probe>: x, ...}``;
    the average is over the attacked sets that every run has (a set only some runs have is shown, not
    averaged), never over the cue probes (:func:`probe_columns`), which follow it.

    With ``seed_means``, after the runs of a policy trained with two or more seeds (names
    ``<policy> s<seed>``), a row ``<policy> mean of N seeds`` of each column's mean (of the seeds
    that have the column) and a row ``<policy> seed range`` (max - min). Values that hold a 95 %
    interval (evaluation reports, ``--ci``) read ``value [lo, hi]``; the means use the values."""
    rows, intervals = [], []
    for name, run in runs:
        sets = run.sets(run.stage_of(metric, stage))
        row: dict = {"training": name}
        row.update({set_name: result.metrics[metric] for set_name, result in sets.items() if metric in result.metrics})
        row.setdefault("clean", None)
        rows.append(row)
        intervals.append({set_name: result.ci.get(metric) for set_name, result in sets.items()})
    probes = probe_columns(runs, stage, metric)
    attack_sets = [set(r) - {"training", "clean"} - probes for r in rows]
    shared = set.intersection(*attack_sets) if attack_sets else set()
    for row in rows:  # over the attacked sets every run has, so that the averages compare
        values = [row[a] for a in sorted(shared)]
        row["attack avg"] = sum(values) / len(values) if values else None
    attacks = sorted({c for r in rows for c in r} - {"training", "clean", "attack avg"} - probes)
    columns = ["training", "clean", *attacks, "attack avg", *sorted(probes)]
    out = []
    for row, ci in zip(rows, intervals):
        out.append({"training": row["training"], **{c: _cell(row.get(c), ci.get(c), metric) for c in columns[1:]}})
    if seed_means:
        out += _seed_rows(rows, columns, metric)
    return out


def probe_columns(runs: list[tuple[str, RunResult]], stage: str | None, metric: str) -> set[str]:
    """The sets an evaluation report of any run marks as cue probes."""
    return {set_name for _, run in runs for set_name, result in run.sets(run.stage_of(metric, stage)).items() if result.probe}


def paired_differences(named: list[tuple[str, RunResult]], base: str, metric: str, stage: str | None = None) -> list[dict]:
    """Rows ``{"training": name, set: "d [lo, hi]"}``: each run's ``metric`` minus the ``base`` run's
    on the questions both answered, with the 95 % interval of a paired bootstrap over those
    questions (the same resampled questions for both models; seed 0). Only sets both runs have
    per-question records of (evaluation directories); ``-`` elsewhere. A model-in-the-loop set holds
    each model's own attacked version of a question: there the pairing is by question."""
    from robust_mrc.reports.intervals import bootstrap_ci

    runs = dict(named)
    if base not in runs:
        raise CompareError(f"--against {base!r}: no such row (rows: {', '.join(runs)})")
    st = stage or runs[base].records_stage()
    base_scores = {set_name: _set_scores(result, metric) for set_name, result in runs[base].sets(st).items() if result.records}  # read once
    out = []
    for name, run in named:
        if name == base:
            continue
        row: dict = {"training": f"{name} - {base}"}
        for set_name, b in base_scores.items():
            a = _set_scores(run.sets(st).get(set_name), metric)
            shared = [i for i in (a or {}) if i in (b or {})]
            if not shared:
                row[set_name] = "-"
                continue
            diffs = [a[i] - b[i] for i in shared]
            lo, hi = bootstrap_ci(diffs)
            fmt = "{:+.3f}" if metric == "acc" else "{:+.1f}"
            row[set_name] = f"{fmt.format(sum(diffs) / len(diffs))} [{fmt.format(lo)}, {fmt.format(hi)}]"
        out.append(row)
    return out


def by_clean_answer(named: list[tuple[str, RunResult]], metric: str, stage: str | None = None) -> list[dict]:
    """Rows ``{"training": name, set: "r / w"}``: each run's mean ``metric`` on an attacked set over
    the questions it answered right on clean (``r``) and over those it answered wrong (``w``), from
    its per-question records; right means at least half the metric's maximum (accuracy 1, F1 or EM
    >= 50). ``r`` is how much of what a model read survives the attack; ``w`` is what it gets
    right only under attack, where a mark that points away from an option (AddSent's sentence, DE's
    passage fragments) gives the answer away by elimination: a model that learnt the mark gains
    there, a reader does not."""
    full = 1.0 if metric == "acc" else 100.0
    fmt = "{:.3f}" if metric == "acc" else "{:.1f}"
    out = []
    for name, run in named:
        sets = run.sets(stage or run.records_stage())
        clean = _set_scores(sets.get("clean"), metric) or {}
        row: dict = {"training": name}
        for set_name, result in sets.items():
            attacked = _set_scores(result, metric) if set_name != "clean" and result.records else None
            if not attacked:
                continue
            halves = []
            for right in (True, False):
                values = [attacked[q] for q in attacked if q in clean and (clean[q] >= full / 2) == right]
                halves.append(f"{fmt.format(sum(values) / len(values))} ({len(values)})" if values else "-")
            row[set_name] = " / ".join(halves)
        out.append(row)
    columns = sorted({c for r in out for c in r} - {"training"})
    return [{"training": r["training"], **{c: r.get(c, "-") for c in columns}} for r in out]


def _set_scores(result: SetResult | None, metric: str) -> dict[str, float] | None:
    """``{question id: score}`` of a run on one set, from its prediction records; None without them."""
    from robust_mrc.reports.intervals import question_scores

    if result is None or result.records is None or not result.records.is_file():
        return None
    records = _read_json(result.records, "prediction records")
    values = question_scores(records, metric, result.scorer)
    return dict(zip(records, values)) if values is not None else None


def _cell(value, interval, metric: str):
    """A value in the metric's precision (F1 / EM: 1 decimal, accuracy: 3), ``-`` when missing,
    ``value [lo, hi]`` with an interval."""
    if not isinstance(value, (int, float)):
        return "-"
    fmt = "{:.3f}" if metric == "acc" else "{:.1f}"
    text = fmt.format(value)
    return f"{text} [{fmt.format(interval[0])}, {fmt.format(interval[1])}]" if interval else text


_SEEDED = re.compile(r"^(?P<policy>.+) s(?P<seed>-?\d+)$")


def _seed_rows(rows: list[dict], columns: list[str], metric: str) -> list[dict]:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        m = _SEEDED.match(str(row["training"]))
        if m:
            groups.setdefault(m["policy"], []).append(row)
    extra = []
    for policy, members in groups.items():
        if len(members) < 2:
            continue
        mean_row, range_row = {"training": f"{policy} mean of {len(members)} seeds"}, {"training": f"{policy} seed range"}
        for c in columns[1:]:
            vals = [r[c] for r in members if isinstance(r.get(c), (int, float))]
            mean_row[c] = _cell(sum(vals) / len(vals), None, metric) if vals else "-"
            range_row[c] = _cell(max(vals) - min(vals), None, metric) if len(vals) > 1 else "-"
        extra += [mean_row, range_row]
    return extra


def _one_task(tasks: dict[str, list[str]]) -> str:
    """The task of every run; a :class:`CompareError` naming the runs of each task when they differ."""
    if len(tasks) > 1:
        runs = "; ".join(f"{task}: {', '.join(dirs)}" for task, dirs in sorted(tasks.items()))
        raise CompareError(
            f"the runs are of different tasks ({runs}): one table compares one task's runs "
            "(accuracy for mc, F1 / EM for span); compare each task's runs separately"
        )
    return next(iter(tasks))


def compare(
    runs: list[str],
    *,
    ci: bool = False,
    metric: str | None = None,
    stage: str | None = None,
    out: str | None = None,
    seed_means: bool = True,
    against: str | None = None,
    by_clean: bool = False,
    html: str | None = None,
) -> str:
    """The comparison table of the run or evaluation directories ``runs`` (the module doc), printed
    and written to ``out``: ``ci`` adds the intervals, ``metric`` / ``stage`` choose the numbers,
    ``seed_means`` the mean and range rows, ``against`` a table of paired differences to that row,
    ``by_clean`` each attacked set over the questions right and wrong on clean. ``html`` (default:
    ``out`` with the suffix ``.html``) gets the same tables as a page with a chart per set: each
    seed a dot, the policy's mean with its interval (:func:`compare_html`)."""
    html = html or page_beside(out)
    for path in (out, html):
        if path:
            check_writable(path)
    loaded = []
    ran: dict[str, set[str]] = {}  # set -> what made it, over the evaluation reports
    tasks: dict[str, list[str]] = {}  # task -> the directories of its runs
    for r in runs:
        report = read_report(r) if (Path(r) / "report.json").is_file() else None
        rows = load_evaluation(r, ci, report) if report is not None else [load_run(r)]
        loaded += rows
        for task in dict.fromkeys(row.task for row in rows):
            tasks.setdefault(task, []).append(str(r))
        for row in what_ran(report) if report is not None else []:
            ran.setdefault(row["set"], set()).add(f"{row['attack']} ({row['method']}, {row['paper']}; {row['resources']})")
    if not loaded:
        raise CompareError(f"{', '.join(runs)}: no evaluated model in the report(s): nothing to compare")
    task = _one_task(tasks)
    metric = metric or ("f1" if task == "span" else "acc")
    loaded = merge_evaluations(loaded)
    names = distinct_names([run.name for run in loaded], [run.label for run in loaded])
    named = list(zip(names, loaded))
    table = format_table(comparison_rows(named, metric, stage, seed_means))
    probes = probe_columns(named, stage, metric)
    if probes:
        table += (
            f"\nCue probes ({', '.join(sorted(probes))}): an attack's surface mark on the correct answer, not in the attack avg; "
            "a reader holds or gains against clean, a model that learnt the mark falls.\n"
        )
    if against:
        table += f"\n\nDifference against {against} (paired 95 % bootstrap interval over the questions both have):\n\n"
        table += format_table(paired_differences(named, against, metric, stage))
    if by_clean:
        table += (
            "\n\nScore on each attacked set over the questions answered right on clean / wrong on clean (question counts in brackets); "
            "right-on-clean: what a model read and kept under attack; wrong-on-clean: what the attack's mark gave away:\n\n"
        )
        split = by_clean_answer(named, metric, stage)
        table += format_table(split) if any(len(r) > 1 for r in split) else "(no per-question records: give evaluate.py directories)\n"
    if ran:
        table += "\n\nWhat ran (attack, paper method or stand-in, paper; resources):\n\n"
        lines = [
            f"- {name}: {' | '.join(sorted(made))}" + (" **differs between runs**" if len(made) > 1 else "") for name, made in ran.items()
        ]
        table += "\n".join(lines)
    print(table)
    if out:
        atomic_write_bytes(Path(out), table.encode())
    if html:
        atomic_write_bytes(Path(html), compare_html(named, metric, stage, table).encode("utf-8"))
    return table


def page_beside(out: str | None) -> str | None:
    """The page written beside ``--out`` without ``--html``: ``out`` with the suffix ``.html``; none
    when ``out`` is itself an .html file (the table goes there). A file of that name that robust-mrc
    did not write is never replaced: a :class:`CompareError` names it."""
    if not out or Path(out).suffix.lower() == ".html":
        return None
    page = Path(out).with_suffix(".html")
    if page.exists() and (not page.is_file() or GENERATOR not in page.read_text(encoding="utf-8", errors="replace")[:2000]):
        raise CompareError(f"{page}: exists and is not a page robust-mrc wrote; give --html FILE for the comparison page")
    return str(page)


# two-sided 95 % quantiles of Student's t by degrees of freedom (1-30); beyond: the normal's
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131)
_T95 += (2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def mean_interval(values: list[float]) -> list[float] | None:
    """The 95 % t-interval of the mean of ``values`` (seeds); None for fewer than two."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    sd = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    half = (_T95[n - 2] if n - 1 <= len(_T95) else 1.96) * sd / n**0.5
    return [mean - half, mean + half]


Points = dict[str, dict[str, list[tuple[float, tuple | None]]]]


def seed_points(named: list[tuple[str, RunResult]], metric: str, stage: str | None = None) -> Points:
    """``{set: {policy: [(value, interval or None), ...]}}``: each run's ``metric`` on each set,
    runs named ``<policy> s<seed>`` gathered under their policy (one value per seed), with the
    run's own 95 % interval where its report holds one."""
    points: dict[str, dict[str, list]] = {}
    for name, run in named:
        m = _SEEDED.match(name)
        policy = m["policy"] if m else name
        for set_name, result in run.sets(run.stage_of(metric, stage)).items():
            if metric in result.metrics:
                points.setdefault(set_name, {}).setdefault(policy, []).append((float(result.metrics[metric]), result.ci.get(metric)))
    return points


def compare_html(named: list[tuple[str, RunResult]], metric: str, stage: str | None, table: str) -> str:
    """The comparison as a page: the tables of :func:`compare` (the same text, as HTML), then per
    set a chart of training policy x value, each seed a dot and the mean with its 95 % interval
    (t over seeds; one seed: its bootstrap interval over questions, when the report holds one); the
    cue probes' charts apart."""
    from robust_mrc.reports.charts import dot_chart
    from robust_mrc.reports.html import markdown_html, page

    points = seed_points(named, metric, stage)
    probes = probe_columns(named, stage, metric)
    order = ["clean", *sorted(s for s in points if s != "clean" and s not in probes), *sorted(s for s in points if s in probes)]
    charts: dict[bool, list[str]] = {False: [], True: []}
    for set_name in (s for s in order if s in points):
        rows = []
        for policy, values in points[set_name].items():
            vals = [v for v, _ in values]
            ci = mean_interval(vals) if len(vals) > 1 else (list(values[0][1]) if values[0][1] else None)
            rows.append((policy, vals, ci))
        charts[set_name in probes].append(dot_chart(set_name, rows, axis=metric))
    body = [
        "<h1>Training policy x test set</h1>",
        f"<p>Each dot a run (seed), the bar its policy's mean with the 95 % interval (t over the seeds; a single run: its "
        f"bootstrap interval over questions where the report holds one); metric <code>{escape(metric)}</code>.</p>",
        f'<div class="charts">{"".join(charts[False])}</div>',
    ]
    if charts[True]:
        body += ["<h2>Cue probes</h2>", f'<div class="charts">{"".join(charts[True])}</div>']
    body.append(markdown_html(table))
    return page("Training policy x test set", "\n".join(body))
