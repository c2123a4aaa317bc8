#!/bin/bash
# Thirty-third session: the pruning rule that learns the model's error (learned_error.patch applied: the code at
# HEAD) against the fixed ratio of estimates it replaced (the patch reversed: 1.5x the fastest's estimate), in
# real tunes of the matmul (32 trials a problem) and attention (24) recipes on one H200, alternating, one call.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
python3 -m compileall -q /tmp/site vendor_nvidia plugins >/dev/null 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > /tmp/gpu.txt
patch=benchmarks/results/s43/prune_ab/learned_error.patch
mkdir -p /tmp/res && cp /tmp/gpu.txt /tmp/res/
for run in learned_1 fixed_1 learned_2 fixed_2; do
  case $run in fixed*) patch -R -p1 -s < $patch;; esac
  grep -c "class Evidence" kt_cli/evaluate/pruning.py > /tmp/res/${run}.rule
  for k in matmul:32 attention:24; do
    timeout 150 python3 benchmarks/run.py --kernels ${k%:*} --trials ${k#*:} --no-anchors --out /tmp/art_${run}_${k%:*} --json /tmp/res/${run}_${k%:*}.json > /tmp/res/${run}_${k%:*}.log 2>&1
    echo "$run ${k%:*} rc=$?"
    f=$(find /tmp/art_${run}_${k%:*} -name trials.jsonl | head -1); [ -n "$f" ] && cp "$f" /tmp/res/${run}_${k%:*}.trials.jsonl
  done
  case $run in fixed*) patch -p1 -s < $patch;; esac
  (cd /tmp/res && tar czf $OUT/runs.tgz *)
done
