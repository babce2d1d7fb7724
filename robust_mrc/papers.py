"""The papers the attacks, policies and diagnostics follow, named as people cite them.

Everything a user reads (the attack registry, reports, W&B tables, configs, docs) names a paper by
its :data:`CITATION` string, e.g. ``Si et al. 2021 (AdvRACE)``; ``docs/references.md`` lists them
with their titles and links.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    key: str  # short handle used in code
    cite: str  # how people cite it
    title: str
    venue: str
    url: str  # "" where no stable link is recorded


PAPERS: dict[str, Paper] = {
    p.key: p
    for p in (
        Paper(
            "advrace",
            "Si et al. 2021 (AdvRACE)",
            "Benchmarking Robustness of Machine Reading Comprehension Models",
            "Findings of ACL 2021",
            "https://arxiv.org/abs/2004.14004",
        ),
        Paper(
            "jia_liang",
            "Jia & Liang 2017",
            "Adversarial Examples for Evaluating Reading Comprehension Systems",
            "EMNLP 2017",
            "https://arxiv.org/abs/1707.07328",
        ),
        Paper(
            "magnet",
            "Lin, Zou & Ding 2021 (magnet options)",
            "Using Adversarial Attacks to Reveal the Statistical Bias in Machine Reading Comprehension Models",
            "ACL 2021",
            "",
        ),
        Paper(
            "dureader_robust",
            "Tang et al. 2021 (DuReader_robust)",
            "DuReader_robust: A Chinese Dataset Towards Evaluating Robustness and Generalization of Machine Reading "
            "Comprehension in Real-World Applications",
            "ACL 2021",
            "https://arxiv.org/abs/2004.11142",
        ),
        Paper(
            "wu",
            "Wu et al. 2021",
            "Evaluating Neural Machine Comprehension Model Robustness to Noisy Inputs and Adversarial Attacks",
            "arXiv 2020",
            "",
        ),
    )
}


def cite(*keys: str) -> str:
    """The citation string of one or more papers (``cite("advrace", "wu")``), joined by "; "."""
    return "; ".join(PAPERS[k].cite for k in keys)
