#!/bin/bash
# 2x H200 host (32 cores). The device handed on to the chosen waiter alone (kt_cli/evaluate/device_turns.py with
# an event a waiter: "new", the checkout) against one condition every waiter waits on ("base", 9f1629f), and
# "si": the checkout with every kt process's GIL switch interval at 1 ms (benchmarks/experiments/switch_interval,
# KT_SWITCH_INTERVAL_S=0.001) instead of Python's 5 ms. `kt tune` of the matmul recipe at 128 trials a problem,
# cold, KT_PROFILE_DIR (the device workers' request stamps kept), CPU sampled from /proc.
# Before the call: rm -rf _base && mkdir _base && git archive 9f1629f kt_cli plugins recipes benchmarks/scale.py pyproject.toml | tar -x -C _base
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in new_w2_1 base_w2_1 si_w2_1 new_w1_1 base_w1_1 si_w1_1 new_w2_2 si_w2_2; do
  code=${run%%_*}; w=${run#*_w}; w=${w%%_*}
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  pp=/tmp/site; [ $code = si ] && pp=$PWD/benchmarks/experiments/switch_interval:/tmp/site
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl & sampler=$!
  (cd $dir && PYTHONPATH=$pp KT_SWITCH_INTERVAL_S=$([ $code = si ] && echo 0.001) timeout 80 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_$run.log 2>&1); echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler
  for f in $KT_PROFILE_DIR/pipe-worker-*; do grep -q -E "^(time_held|judge_cases|ready_device)" $f || rm -f $f; done; rm -f $KT_PROFILE_DIR/pipe-caller-*
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
