#!/bin/bash
# 2x H200 host (32 cores). kt's own 1 ms GIL switch interval (kt_cli/hand_offs.py: "new", the checkout) against
# the same code at Python's 5 ms ("base": git archive HEAD with SWITCH_INTERVAL_S = 0.005). `kt tune` of the
# matmul recipe at 128 trials a problem, cold, KT_PROFILE_DIR (device workers' request stamps kept), CPU
# sampled from /proc. Two workers, one, alternating codes.
# Before the call: rm -rf _base && mkdir _base && git archive HEAD kt_cli plugins recipes benchmarks/scale.py pyproject.toml | tar -x -C _base
#   && sed -i 's/^SWITCH_INTERVAL_S = 0.001$/SWITCH_INTERVAL_S = 0.005/' _base/kt_cli/hand_offs.py
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
grep -q "^SWITCH_INTERVAL_S = 0.005$" _base/kt_cli/hand_offs.py || exit 4
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in new_w2_1 base_w2_1 new_w1_1 base_w1_1; do
  code=${run%%_*}; w=${run#*_w}; w=${w%%_*}
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl & sampler=$!
  (cd $dir && timeout 70 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_$run.log 2>&1); echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler
  for f in $KT_PROFILE_DIR/pipe-worker-*; do grep -q -E "^(time_held|judge_cases|ready_device)" $f || rm -f $f; done; rm -f $KT_PROFILE_DIR/pipe-caller-*
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
