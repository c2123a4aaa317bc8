#!/bin/bash
# Thirty-eighth session: other processes' results handed to the evaluator at every read of the study (403c57b with
# observe.patch applied, "new": objective._read) against 403c57b ("base": at a trial's turn only). On an nvidia-h200-x2 host: workers 2,2,1,1
# then 2,2,1,1, then 2,2; the codes alternating. `kt tune` of
# the matmul recipe at 128 trials a problem, cold, KT_PROFILE_DIR, CPU of the kt processes and the host from /proc.
# Before the call: rm -rf _base && mkdir _base && git archive 403c57b kt_cli plugins vendor_nvidia vendor_amd recipes benchmarks/scale.py pyproject.toml | tar -x -C _base
# (and move results s14-s21, s24-s26, s29, s31, s34, s35, s42, s44-s46 aside: the tree must stay under 64 MiB).
RUNS=${RUNS:-"new_w2_1 base_w2_1 new_w1_1 base_w1_1 base_w2_2 new_w2_2 base_w1_2 new_w1_2 new_w2_3 base_w2_3"}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
grep -q "if fresh:" _base/kt_cli/search/objective.py && exit 4  # the base must be the code before
mkdir -p $OUT/r; nproc > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in $RUNS; do
  code=${run%%_*}; w=${run#*_w}; w=${w%%_*}
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl & sampler=$!
  (cd $dir && PYTHONPATH=$dir:$dir/plugins:/tmp/site timeout 45 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_$run.log 2>&1); echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler
  for f in $KT_PROFILE_DIR/pipe-worker-*; do grep -q -E "^(time_held|judge_cases|ready_device)" $f || rm -f $f; done; rm -f $KT_PROFILE_DIR/pipe-caller-* $KT_PROFILE_DIR/pipe-compile-*
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
