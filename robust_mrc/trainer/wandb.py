"""Weights & Biases, in one place: the run of a training job, its robustness tables, its end.

``logger=wandb`` gives (offline unless ``logger.mode=online`` / ``WANDB_MODE=online``):

* the resolved config as the run config; the run grouped by experiment (``logger.group``, else
  the Hydra choice of ``experiment``) and tagged ``attack:<name>``, ``model:<name>``,
  ``seed:<n>``, ``task:<name>``, ``data:<name>``, ``experiment:<name>`` (plus ``logger.tags``);
  display name ``<attack>-<model>-seed<n>`` (or ``logger.run_name``);
* every metric the module logs: per epoch ``val/acc`` (``val/f1``, ``val/em``),
  ``val/<attack>/...`` and ``val/robust_avg``; ``train/loss``, ``train/items/...``;
* at test time (:class:`RobustnessTables`) the table ``test/robustness``, one row per test set:
  ``set, metric, clean, attacked, drop, abs_drop`` (drop relative as in the evaluation report,
  abs_drop = clean minus attacked; the clean row drops 0), and the
  table ``test/samples``: a few examples of each attacked test set (the ones the attack flipped
  from right to wrong first) with the attack's edits, the model's prediction on the attacked and
  on the clean version, and the gold answer;
* ``wandb.finish()`` at the end of every job (:func:`finish`), so that the next job of a Hydra
  multirun in the same process starts its own run instead of writing into this one.

An online run needs an API key: :func:`require_credentials` looks for one where wandb does
(``WANDB_API_KEY``, ``~/.netrc`` or ``NETRC``, wandb's settings) without the network, and says
what to do in one line when there is none.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
from omegaconf import DictConfig, OmegaConf

from robust_mrc.core.errors import ConfigError
from robust_mrc.data.examples import LETTERS, MCExample
from robust_mrc.diagnostics.drops import record_correct, relative_drop
from robust_mrc.reports.robustness import what_ran

log = logging.getLogger(__name__)

ROBUSTNESS_COLUMNS = ["set", "metric", "clean", "attacked", "drop", "abs_drop"]
SAMPLE_COLUMNS = ["set", "id", "question", "passage", "options", "edits", "prediction", "clean_prediction", "gold", "correct"]


def experiment_name(cfg: DictConfig) -> str | None:
    """The Hydra choice of the ``experiment`` group (``experiment=advrace_targeted``), if any."""
    try:
        from hydra.core.hydra_config import HydraConfig

        return HydraConfig.get().runtime.choices.get("experiment")
    except (ValueError, ImportError):  # not under @hydra.main
        return None


def run_group(cfg: DictConfig) -> str | None:
    return cfg.logger.group or experiment_name(cfg)


def run_tags(cfg: DictConfig) -> list[str]:
    tags = [str(t) for t in (cfg.logger.tags or [])]
    tags += [f"attack:{cfg.attack.name}", f"model:{cfg.model.name}", f"seed:{cfg.seed}", f"task:{cfg.task.name}", f"data:{cfg.data.name}"]
    experiment = experiment_name(cfg)
    if experiment:
        tags.append(f"experiment:{experiment}")
    return [t[:64] for t in dict.fromkeys(tags)]  # W&B caps a tag at 64 characters


def credentials_problem() -> str | None:
    """Why wandb would find no usable API key here (``None``: it finds one), asked as ``wandb.init``
    asks (environment, netrc file, wandb's settings), without prompting and without the network."""
    from wandb.errors import AuthenticationError
    from wandb.sdk import wandb_setup
    from wandb.sdk.lib import wbauth

    try:
        host = wandb_setup.singleton().settings.base_url
        found = wbauth.authenticate_session(host=host, source="robust-mrc", prompt=False, update_session=False)
    except AuthenticationError as err:
        return str(err).splitlines()[0].rstrip(".")
    return None if found else f"no W&B API key for {host}"


def require_credentials() -> None:
    """A :class:`ConfigError` before any work when an online W&B run would find no API key."""
    problem = credentials_problem()
    if problem:
        raise ConfigError(
            f"W&B online mode needs an API key: {problem}. Run `wandb login`, set WANDB_API_KEY, "
            "or log offline (logger.mode=offline, WANDB_MODE=offline) and `wandb sync` the run later"
        )


def require_logger_credentials(cfg: DictConfig) -> None:
    """:func:`require_credentials` for a training run that logs to W&B online (``logger=wandb
    logger.mode=online``)."""
    logger_cfg = cfg.get("logger")
    if logger_cfg is not None and logger_cfg.get("name") == "wandb" and (logger_cfg.get("mode") or "offline") == "online":
        require_credentials()


def wandb_logger(cfg: DictConfig, out: Path) -> pl.loggers.WandbLogger:
    """The Lightning W&B logger of a run: resolved config, group, tags, files under ``out/wandb``."""
    logger_cfg = cfg.logger
    mode = logger_cfg.mode or "offline"  # WANDB_MODE set but empty
    if mode not in ("online", "offline", "disabled"):
        raise ValueError(f"logger.mode={mode!r}: expected online, offline or disabled")
    if mode == "online":
        require_credentials()
    os.environ.setdefault("WANDB_MODE", mode)
    return pl.loggers.WandbLogger(
        project=logger_cfg.project,
        entity=logger_cfg.entity,
        group=run_group(cfg),
        tags=run_tags(cfg),
        name=logger_cfg.run_name or f"{cfg.attack.name}-{cfg.model.name}-seed{cfg.seed}",
        job_type="train",
        save_dir=str(out),
        mode=mode,
        config=OmegaConf.to_container(cfg, resolve=True),
    )


def wandb_loggers(loggers) -> list:
    return [lg for lg in loggers or [] if isinstance(lg, pl.loggers.WandbLogger)]


def finish(loggers, exit_code: int = 0) -> None:
    """End the W&B run of this job (rank 0 owns it); a no-op without one."""
    if not wandb_loggers(loggers):
        return
    import wandb

    if wandb.run is not None:
        wandb.finish(exit_code=exit_code)


# -- robustness tables -----------------------------------------------------------------------


def robustness_rows(metrics: Mapping[str, Any], set_names: list[str], metric: str, stage: str = "test") -> list[list]:
    """``[set, metric, clean, attacked, drop, abs_drop]`` per evaluation set (clean first, drops 0):
    ``drop`` relative ((clean - attacked) / clean, as in the evaluation report), ``abs_drop`` =
    clean - attacked."""
    clean_key = f"{stage}/{metric}"
    if clean_key not in metrics:
        return []
    clean = float(metrics[clean_key])
    rows = []
    for name in set_names:
        key = clean_key if name == "clean" else f"{stage}/{name}/{metric}"
        if key in metrics:
            attacked = float(metrics[key])
            rows.append([name, metric, clean, attacked, relative_drop(clean, attacked), clean - attacked])
    return rows


def _answer(example, record: Mapping[str, Any] | None) -> str:
    """The prediction of ``record`` as text (an option ``B. ...`` for multiple choice)."""
    if record is None:
        return ""
    pred = record["pred"]
    if isinstance(example, MCExample) and isinstance(pred, int):
        return f"{LETTERS[pred]}. {example.options[pred]}" if 0 <= pred < len(example.options) else str(pred)
    return str(pred)


def sample_rows(
    eval_sets: Mapping[str, list],
    predictions: Mapping[str, Mapping[str, dict]],
    per_set: int = 3,
    text_chars: int = 600,
    metric: str = "squad_v1",
) -> list[list]:
    """A few examples of each attacked set: first those the attack flipped from right to wrong,
    then the other errors, then the rest (in data order); "right" by the task's scorer ``metric``."""
    clean_preds = predictions.get("clean", {})
    clean_examples = {ex.id: ex for ex in eval_sets.get("clean", [])}
    rows = []
    for name, examples in eval_sets.items():
        if name == "clean":
            continue
        preds = predictions.get(name, {})

        def rank(ex, preds=preds):
            ok = record_correct(preds.get(ex.id, {"pred": None}), metric)
            clean_ok = record_correct(clean_preds.get(ex.id, {"pred": None}), metric)
            return 0 if clean_ok and ok is False else 1 if ok is False else 2

        chosen = sorted((ex for ex in examples if ex.id in preds), key=rank)[:per_set]
        for ex in chosen:
            record = preds[ex.id]
            if isinstance(ex, MCExample):
                passage, gold = ex.passage, f"{ex.answer_letter}. {ex.answer}"
                options = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(ex.options))
            else:
                passage, gold, options = ex.context, " | ".join(ex.answer_texts), ""
            edits = "; ".join(f"{e.attack}: {e.detail}" if e.detail else e.attack for e in ex.edits)
            clean_ex = clean_examples.get(ex.id, ex)
            rows.append(
                [
                    name,
                    ex.id,
                    ex.question,
                    passage[:text_chars],
                    options,
                    edits,
                    _answer(ex, record),
                    _answer(clean_ex, clean_preds.get(ex.id)),
                    gold,
                    bool(record_correct(record, metric)),
                ]
            )
    return rows


class RobustnessTables(pl.Callback):
    """Logs ``test/robustness`` and ``test/samples`` (see the module docstring) to the W&B logger
    at the end of ``trainer.test``; rank 0 only (the predictions are already gathered there)."""

    def __init__(self, samples_per_set: int = 3) -> None:
        self.samples_per_set = samples_per_set

    def on_test_end(self, trainer: pl.Trainer, pl_module) -> None:
        if not trainer.is_global_zero:
            return
        loggers = wandb_loggers(trainer.loggers)
        if not loggers:
            return
        metrics = {k: float(v) for k, v in trainer.callback_metrics.items()}
        names = pl_module.set_names("test")
        rows = robustness_rows(metrics, names, pl_module.primary_metric)
        datamodule = trainer.datamodule
        eval_sets = getattr(datamodule, "eval_sets", {}).get("test", {}) if datamodule is not None else {}
        samples = sample_rows(
            eval_sets, pl_module.last_predictions, self.samples_per_set, metric=str(pl_module.task_cfg.get("metric") or "squad_v1")
        )
        for lg in loggers:
            if rows:
                lg.log_table(key="test/robustness", columns=ROBUSTNESS_COLUMNS, data=rows)
            if samples:
                lg.log_table(key="test/samples", columns=SAMPLE_COLUMNS, data=samples)
            # the headline numbers also as summary fields (sortable columns in the runs table)
            run = lg.experiment
            for name, _metric, _clean, _attacked, drop, abs_drop in rows:
                if name != "clean":
                    run.summary[f"test/{name}/drop"] = drop
                    run.summary[f"test/{name}/abs_drop"] = abs_drop


EXAMPLE_COLUMNS = ["set", "id", "status", "question type", "question", "passage", "answers", "edits", "choices"]
DROP_COLUMNS = ["model", "set", "abs_drop", "ci_low", "ci_high", "drop", "flip"]


def example_table_rows(browser: Mapping[str, Mapping[str, Any]]) -> list[list]:
    """The examples browser of ``report.html`` as W&B rows (:data:`EXAMPLE_COLUMNS`): the marked
    question, passage, options (or gold answers) and every model's choices as HTML cells (each
    with its own styles and a policy that runs no script; all data text escaped), the rest as text."""
    import wandb

    from robust_mrc.reports.html import answers_html, choices_html, html_cell, segments_html

    def cell(body: str):
        return wandb.Html(html_cell(body), inject=False, data_is_not_path=True)

    rows = []
    for b in browser.values():
        for r in b["rows"]:
            status = r["status"] + (f" ({r['direction']})" if r.get("direction") else "")
            marked = [cell(segments_html(r["question"])), cell(segments_html(r["passage"])), cell(answers_html(r))]
            rows.append([r["set"], r["id"], status, r["qtype"], *marked, "; ".join(r["edits"]), cell(choices_html(r))])
    return rows


def drop_rows(report: Mapping[str, Any]) -> list[list]:
    """Per model and attacked set (not clean): ``[model, set, abs_drop, ci_low, ci_high, drop, flip]``
    (the paired 95 % interval of abs_drop; None where the report has none), from ``report.json``."""
    out = []
    for model, entry in report["models"].items():
        for name, m in entry["sets"].items():
            if name == "clean" or "abs_drop" not in m:
                continue
            ci = m.get("abs_drop_ci95") or [None, None]
            out.append([model, name, m["abs_drop"], ci[0], ci[1], m.get("drop"), m.get("flip")])
    return out


def log_evaluation(
    cfg: DictConfig,
    report: Mapping[str, Any],
    rows: list[dict],
    images: list[Path],
    out: Path,
    browser: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """``evaluate.py wandb=true``: one W&B run (offline unless ``WANDB_MODE=online``) holding the
    resolved config, the report as the table ``eval/report`` (one row per model and set), the
    drop per set as the table ``eval/drop`` (with its interval) and its bar chart
    ``eval/drop_chart`` (the interval drawn in ``eval/drop_intervals``, the report's SVG), the
    examples browser as ``eval/examples``, the attack average per model in the summary, and the
    evaluation plots as images; finished at once."""
    import wandb

    from robust_mrc.reports.html import html_cell
    from robust_mrc.reports.robustness import drop_charts

    os.environ.setdefault("WANDB_MODE", "offline")
    run = wandb.init(
        project=str(cfg.wandb_project),
        dir=str(out),
        job_type="evaluate",
        group=str(report.get("suite")),
        tags=[f"suite:{report.get('suite')}", f"task:{report.get('task')}", f"data:{report.get('data')}"],
        config=OmegaConf.to_container(cfg, resolve=True),
        reinit="finish_previous",
    )
    try:
        columns = list(rows[0]) if rows else []
        run.log({"eval/report": wandb.Table(columns=columns, data=[[r[c] for c in columns] for r in rows])})
        ran = what_ran(report)  # per set: the attack, paper method or stand-in, the paper, its resources
        if ran:
            run.log({"eval/what_ran": wandb.Table(columns=list(ran[0]), data=[list(r.values()) for r in ran])})
        drops = drop_rows(report)
        if drops:
            table = wandb.Table(columns=DROP_COLUMNS, data=drops)
            chart = wandb.plot.bar(table, "set", "abs_drop", title="drop per set (clean - attacked)")
            run.log({"eval/drop": table, "eval/drop_chart": chart})
            run.log({"eval/drop_intervals": wandb.Html(html_cell(drop_charts(report)), inject=False, data_is_not_path=True)})
        examples = example_table_rows(browser or {})
        if examples:
            run.log({"eval/examples": wandb.Table(columns=EXAMPLE_COLUMNS, data=examples)})
        for path in images:
            if path.is_file():
                run.log({f"eval/plots/{path.stem}": wandb.Image(str(path))})
        for model, entry in report["models"].items():
            if "attack_avg" in entry:
                run.summary[f"eval/{model}/attack_avg"] = entry["attack_avg"]
    finally:
        run.finish()
