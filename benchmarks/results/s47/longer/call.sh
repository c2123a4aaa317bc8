#!/bin/bash
# Thirty-seventh session: one worker against two at 256 trials a problem (twice the usual budget: a run's ramp and
# tail are a smaller share of its span), the working tree (182d578), alternating w1 w2 w2 w1 on an nvidia-h200-x2
# host; `kt tune` of the matmul recipe, cold, KT_PROFILE_DIR (device workers' stamps kept), CPU from /proc; and the
# host's CPU topology (lscpu).
# Before the call: move results s14-s20, s26, s29, s31, s34, s35 aside (the tree must stay under 64 MiB).
RUNS=${RUNS:-"new_w1_1 new_w2_1 new_w2_2 new_w1_2"}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; nproc > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
lscpu > $OUT/r/lscpu.txt 2>&1; grep -E '^(Thread|Core|Socket|CPU\(s\)|Model name)' $OUT/r/lscpu.txt
for run in $RUNS; do
  code=${run%%_*}; w=${run#*_w}; w=${w%%_*}
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl & sampler=$!
  (PYTHONPATH=$PWD:$PWD/plugins:/tmp/site timeout 110 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 256 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_$run.log 2>&1); echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler
  for f in $KT_PROFILE_DIR/pipe-worker-*; do grep -q -E "^(time_held|judge_cases|ready_device)" $f || rm -f $f; done; rm -f $KT_PROFILE_DIR/pipe-caller-*
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
