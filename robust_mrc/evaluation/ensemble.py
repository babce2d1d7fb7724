"""Ensembles of checkpoints (seed 004 section 4.1) over prediction records.

Multiple choice: ``average`` (mean option probabilities, then argmax) or ``vote`` (majority of
the members' choices). Span QA: ``token_vote`` (keep the answer tokens that occur in at least two
members' answers). The combined records have the members' record layout, so the same metrics,
report and diagnostics apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from robust_mrc.diagnostics.votes import mc_average, mc_majority, span_token_vote

METHODS = {"mc": ("average", "vote"), "span": ("token_vote",)}


def combine_records(members: Sequence[Mapping[str, dict]], task: str, method: str) -> dict[str, dict]:
    """One record per example id present in every member."""
    if method not in METHODS[task]:
        raise ValueError(f"ensemble_method={method!r} does not apply to task={task}; expected one of {METHODS[task]}")
    ids = [i for i in members[0] if all(i in m for m in members[1:])]
    out: dict[str, dict] = {}
    for i in ids:
        recs = [m[i] for m in members]
        if task == "mc":
            probs = [r["probs"] for r in recs]
            if method == "average":
                pred, avg = mc_average(probs)
            else:
                pred, avg = mc_majority([r["pred"] for r in recs], probs)
            out[i] = {"pred": int(pred), "label": recs[0]["label"], "probs": [round(float(p), 6) for p in avg]}
        else:
            confs = [r.get("confidence", 0.0) for r in recs]
            out[i] = {
                "pred": span_token_vote([r["pred"] for r in recs]),
                "golds": recs[0]["golds"],
                "confidence": sum(confs) / len(confs),
                "members": [r["pred"] for r in recs],
            }
    return out
