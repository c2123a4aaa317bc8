#!/bin/bash
# Thirty-first session: pruning in real tunes of the matmul and attention recipes with the lockstep MMA loops in
# the model (it changes their estimates), against a run without pruning in the same call; each run in its own
# folder. Run after holdout_j/call.sh in the same call (its install and environment).
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
for run in prune_1 noprune prune_2; do
  flag=""; [ "$run" = noprune ] && flag="--no-prune"
  timeout 150 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors $flag --out /tmp/art_$run --json $OUT/$run.json > $OUT/$run.log 2>&1
  echo "$run rc=$?"
done
