#!/bin/bash
# 2x H200 host (32 cores), the checkout (9f1629f: trials read through the driver's cursor). Where two workers'
# extra device time goes: `kt tune` of the matmul recipe at 128 trials a problem, cold, KT_PROFILE_DIR with every
# process's stamps kept (the device workers' requests: pipe-worker-PID.log), CPU sampled from /proc. One worker,
# two, one, two.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in w1_1 w2_1 w1_2 w2_2; do w=${run:1:1}
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl & sampler=$!
  timeout 80 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale.jsonl > $OUT/r/scale_$run.log 2>&1; echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
