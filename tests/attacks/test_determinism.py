"""The same example, seed and attack give the same text in another process (other PYTHONHASHSEED)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from attack_samples import mc_examples, span_examples
from robust_mrc.attacks import example_rng, get_attack
out = {}
pool = mc_examples()
for name, kw in [("addsent", {}), ("charswap", {}), ("de_lexical", {}), ("diagnosis", {}),
                 ("dg_retrieval", {"pool": pool}), ("magnet", {"pool": ["X y z.", "Q r s.", "A b c."]}),
                 ("word_replace", {"rate": 0.3}), ("extraction_cue", {}), ("magnet_cue", {})]:
    a = get_attack(name, "mc", **kw)
    out["mc/" + name] = [repr(a(e, example_rng(7, 1, e.id, name))) for e in mc_examples()]
for name in ["addsent", "addonesent", "addsentmod", "addsent_cue", "random_words", "char_noise", "word_noise"]:
    a = get_attack(name, "span")
    out["span/" + name] = [repr(a(e, example_rng(7, 1, e.id, name))) for e in span_examples()]
print(json.dumps(out))
"""


def _run(hashseed: str) -> dict:
    env = dict(os.environ, PYTHONHASHSEED=hashseed, ROBUST_MRC_VECTORS=os.environ.get("ROBUST_MRC_VECTORS", "wordnet"))
    here = Path(__file__).parent
    res = subprocess.run([sys.executable, "-c", SCRIPT, str(here)], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def test_same_output_across_processes(wordnet_ok):
    a, b = _run("1"), _run("4242")
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == b[key], key
    assert sum(r != "None" for r in a["mc/charswap"]) == 4
