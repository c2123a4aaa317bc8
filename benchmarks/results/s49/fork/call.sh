#!/bin/bash
# Thirty-ninth session, a 2x H200 host: the `--workers` processes forked from the parent's fork server (025e97a, "new")
# against spawned (e1279b0, "base"). benchmarks/scale.py, the matmul recipe at 128 trials a problem, cold, KT_PROFILE_DIR;
# the codes alternating (one worker runs the same code in both: EarlyWorkers starts only with two or more).
# Before the call: rm -rf _base && mkdir _base && git archive e1279b0 kt_cli plugins vendor_nvidia vendor_amd recipes benchmarks/scale.py benchmarks/experiments/proc_cpu.py pyproject.toml | tar -x -C _base
RUNS=${RUNS:-"new_w2_1 base_w2_1 new_w1_1 base_w2_2 new_w2_2 new_w1_2 new_w2_3 base_w2_3"}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
grep -q "inherit_fork_server" _base/kt_cli/search/scale.py && exit 4  # the base must be the code before
mkdir -p $OUT/r; nproc > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in $RUNS; do
  code=${run%%_*}; w=${run#*_w}; w=${w%%_*}
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  (cd $dir && PYTHONPATH=$dir:$dir/plugins:/tmp/site timeout 50 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_$run.log 2>&1); echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  for f in $KT_PROFILE_DIR/pipe-worker-*; do grep -q -E "^(time_held|judge_cases|ready_device)" $f || rm -f $f; done; rm -f $KT_PROFILE_DIR/pipe-caller-* $KT_PROFILE_DIR/pipe-compile-*
  (cd $OUT && tar czf runs.tgz r)
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
