"""Training the span extractor of the DE bank (Si et al. 2021 (AdvRACE), section 3.1) as a
training job, and the child process that builds a DE bank for ``distractor_extraction bank=auto``:
:func:`distractor_banks` is the bank maker the train and evaluate jobs and the attacks command hand
to the attacks; it starts ``python -m robust_mrc.jobs.extractor REQUEST`` for a DE bank it does not
have yet (:class:`robust_mrc.banks.auto.DistractorBanks` says why in a child)."""

from __future__ import annotations

import copy
import json
import logging
import os
import sys
from pathlib import Path

from omegaconf import DictConfig, open_dict

from robust_mrc.banks import BankError
from robust_mrc.banks.auto import DistractorBanks
from robust_mrc.banks.span_data import write_span_data

log = logging.getLogger(__name__)

HOLDOUT = 0.1  # share of train passages validating the extractor when the data has no validation


def distractor_banks() -> DistractorBanks:
    """The bank maker of ``bank: auto``: DE banks built in a child process running this module."""
    return DistractorBanks(worker=__name__)


def train_extractor(splits: dict[str, list], seed: int, cfg: DictConfig, work_dir: Path, name: str) -> tuple[str, dict]:
    """The DE span extractor trained with the training config ``cfg`` (its data replaced by the span
    files of ``splits``, written under ``work_dir/span_data``; the run in ``work_dir/train`` unless
    ``cfg.output_dir`` says otherwise): the span checkpoint's path and what the training gave."""
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


def build_requested_bank(request_path: str) -> int:
    """The child process of :class:`~robust_mrc.banks.auto.DistractorBanks` (``python -m
    robust_mrc.jobs.extractor REQUEST``): build the DE bank the request describes (training the
    extractor when the request has no checkpoint), write it and its stats."""
    from robust_mrc.attacks.pools import write_bank
    from robust_mrc.banks.de import DESettings, build_de_bank
    from robust_mrc.banks.stats import bank_stats
    from robust_mrc.data.examples import example_from_dict
    from robust_mrc.data.writers import atomic_write_json

    logging.basicConfig(level=logging.INFO, format="[%(name)s] %(message)s", stream=sys.stdout, force=True)
    req = json.loads(Path(request_path).read_text())

    def read(path):
        with open(path, encoding="utf-8") as fh:
            return [example_from_dict(json.loads(line)) for line in fh if line.strip()]

    settings = DESettings(**{**req["settings"], "overrides": tuple(req["settings"]["overrides"])})
    run_settings = DESettings(settings.overrides + tuple(req["device"]), settings.seed, settings.top, settings.name)
    train = read(req["train"]) if req.get("train") else None
    targets = read(req["targets"])
    out = Path(req["out"])

    def trained(ckpt: str, info: dict) -> None:
        atomic_write_json(req["record"], {"ckpt": str(ckpt), "settings": req["settings"], "train_examples": len(train or []), **info})

    report: dict = {}
    bank = build_de_bank(
        train,
        targets,
        run_settings,
        work_dir=req["work_dir"],
        ckpt=req.get("ckpt"),
        journal_path=out.with_name(out.name + ".partial.jsonl"),
        journal_settings={"bank": out.name},
        report=report,
        on_trained=trained,
        train_extractor=train_extractor,
    )
    write_bank(bank, out.with_name(out.name + ".tmp"))
    sizes = report["nbest_sizes"]
    stats = {
        "bank": str(out),
        "settings": req["settings"],
        "device": req["device"],
        "extractor": json.loads(Path(req["record"]).read_text()),
        "all": bank_stats(bank, targets),
        "filter": {"mean_nbest": round(sum(sizes) / max(len(sizes), 1), 2), "dropped": dict(sorted(report["dropped"].items()))},
    }
    atomic_write_json(out.with_name(out.name + ".stats.json"), stats)
    os.replace(out.with_name(out.name + ".tmp"), out)  # the bank last: its presence says the build is done
    report["journal"].finish()
    print(f"[robust_mrc.banks] DE bank {out}: {len(bank)} questions, {stats['all'].get('covered')} with new distractors", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("python -m robust_mrc.jobs.extractor REQUEST.json (started by distractor_extraction bank=auto)")
    sys.exit(build_requested_bank(sys.argv[1]))
