#!/bin/bash
# Thirty-first session: pruning in real tunes of the matmul and attention recipes with the lockstep MMA loops in
# the model (it changes their estimates), against a run without pruning in the same call; each run in its own
# folder.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
python3 -m compileall -q /tmp/site kt_cli vendor_nvidia plugins >/dev/null 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
for run in prune_1 noprune prune_2; do
  flag=""; [ "$run" = noprune ] && flag="--no-prune"
  timeout 150 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors $flag --out /tmp/art_$run --json $OUT/$run.json > $OUT/$run.log 2>&1
  echo "$run rc=$?"
done
