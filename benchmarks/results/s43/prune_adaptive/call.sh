#!/bin/bash
# Thirty-third session: pruning that learns the model's error from the problem's measured candidates
# (kt_cli/evaluate/pruning.py), in real tunes of the matmul (32 trials a problem, its recipe's budget) and
# attention (24) recipes on one H200, alternating with runs without pruning in the same call; each run in its
# own folder.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
python3 -m compileall -q /tmp/site kt_cli vendor_nvidia plugins >/dev/null 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
for run in prune_1 noprune_1 prune_2 noprune_2 prune_3; do
  flag=""; case $run in noprune*) flag="--no-prune";; esac
  for k in matmul:32 attention:24; do
    timeout 150 python3 benchmarks/run.py --kernels ${k%:*} --trials ${k#*:} --no-anchors $flag --out /tmp/art_${run}_${k%:*} --json $OUT/${run}_${k%:*}.json > $OUT/${run}_${k%:*}.log 2>&1
    echo "$run ${k%:*} rc=$?"
    f=$(find /tmp/art_${run}_${k%:*} -name trials.jsonl | head -1); [ -n "$f" ] && cp "$f" $OUT/${run}_${k%:*}.trials.jsonl
  done
done
