#!/bin/bash
# Thirty-third session: more compiled candidates waiting for the device (DEVICE_QUEUE 8 instead of 1: in flight
# is the compile pool's workers plus the queue), so that the device takes the most promising of more of them
# and pruning judges the rest against a better best (the replays' "8 waiting"). Real tunes of the matmul (32
# trials a problem) and attention (24) recipes with pruning on, alternating queue1, queue8 on one H200.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
python3 -m compileall -q /tmp/site vendor_nvidia plugins >/dev/null 2>&1
mkdir -p /tmp/res && nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > /tmp/res/gpu.txt
for run in queue1_1 queue8_1 queue1_2 queue8_2; do
  q=${run#queue}; q=${q%_*}
  sed -i "s/^DEVICE_QUEUE = [0-9]*$/DEVICE_QUEUE = $q/" kt_cli/evaluate/evaluator.py
  grep "^DEVICE_QUEUE" kt_cli/evaluate/evaluator.py > /tmp/res/${run}.queue
  for k in matmul:32 attention:24; do
    timeout 150 python3 benchmarks/run.py --kernels ${k%:*} --trials ${k#*:} --no-anchors --out /tmp/art_${run}_${k%:*} --json /tmp/res/${run}_${k%:*}.json > /tmp/res/${run}_${k%:*}.log 2>&1
    echo "$run ${k%:*} rc=$?"
    f=$(find /tmp/art_${run}_${k%:*} -name trials.jsonl | head -1); [ -n "$f" ] && cp "$f" /tmp/res/${run}_${k%:*}.trials.jsonl
  done
  (cd /tmp/res && tar czf $OUT/runs.tgz *)
done
sed -i "s/^DEVICE_QUEUE = [0-9]*$/DEVICE_QUEUE = 1/" kt_cli/evaluate/evaluator.py
