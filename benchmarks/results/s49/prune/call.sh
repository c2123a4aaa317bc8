#!/bin/bash
# Thirty-ninth session, one H200: real tunes with pruning (the learned-error rule, 8 compiled candidates waiting for
# the device, the model with a unit's last round of programs) against --no-prune, alternating: the matmul recipe at
# 32 trials a problem and attention at 24 (issue 15's "at least 40% fewer device evaluations, the same best within 1%").
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
python3 -m compileall -q /tmp/site kt_cli vendor_nvidia plugins >/dev/null 2>&1
mkdir -p /tmp/res && nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > /tmp/res/gpu.txt
for run in prune_1 noprune_1 prune_2 noprune_2; do
  flag=""; case $run in noprune*) flag="--no-prune";; esac
  for k in matmul:32 attention:24; do
    timeout 140 python3 benchmarks/run.py --kernels ${k%:*} --trials ${k#*:} --no-anchors $flag --out /tmp/art_${run}_${k%:*} --json /tmp/res/${run}_${k%:*}.json > /tmp/res/${run}_${k%:*}.log 2>&1
    echo "$run ${k%:*} rc=$? $(tail -1 /tmp/res/${run}_${k%:*}.log | cut -c1-160)"
    f=$(find /tmp/art_${run}_${k%:*} -name trials.jsonl | head -1); [ -n "$f" ] && cp "$f" /tmp/res/${run}_${k%:*}.trials.jsonl
  done
  (cd /tmp/res && tar czf $OUT/runs.tgz *)
done
