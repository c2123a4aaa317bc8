#!/bin/bash
# Not run yet (written in the thirty-sixth session after its device time was spent): sm_90's instruction mix decoded
# from the cubin's bytes (vendor_nvidia/sass_fields.py, f6bb476: "new", the checkout) against the same code reading
# it through nvdisasm ("base", 8ce549b). On an nvidia-h200-x2 host: workers 2,1,2,1; on -x4 set RUNS below to
# "new_w4_1 base_w4_1 new_w1_1 base_w1_1 new_w2_1 base_w2_1". `kt tune` of the matmul recipe at 128 trials a
# problem, cold, KT_PROFILE_DIR (device workers' stamps kept), CPU of the kt processes and the host from /proc.
# Before the call: rm -rf _base && mkdir _base && git archive 8ce549b kt_cli plugins vendor_nvidia vendor_amd recipes benchmarks/scale.py pyproject.toml | tar -x -C _base
# (and move results s14-s20, s26, s29, s31, s34, s35 aside: the tree must stay under 64 MiB).
RUNS=${RUNS:-"new_w2_1 base_w2_1 new_w1_1 base_w1_1 base_w2_2 new_w2_2 base_w1_2 new_w1_2"}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
[ -f _base/vendor_nvidia/sass_fields.py ] && exit 4  # the base must read through nvdisasm
mkdir -p $OUT/r; nproc > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in $RUNS; do
  code=${run%%_*}; w=${run#*_w}; w=${w%%_*}
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl & sampler=$!
  (cd $dir && PYTHONPATH=$dir:$dir/plugins:/tmp/site timeout 80 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_$run.log 2>&1); echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler
  for f in $KT_PROFILE_DIR/pipe-worker-*; do grep -q -E "^(time_held|judge_cases|ready_device)" $f || rm -f $f; done; rm -f $KT_PROFILE_DIR/pipe-caller-*
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
