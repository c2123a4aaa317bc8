#!/bin/bash
# Thirty-ninth session, a 2x H200 host: where a two-worker run's processes lose their start. benchmarks/scale.py, the
# matmul recipe at 128 trials a problem, cold, KT_PROFILE_DIR (the `--workers` processes stamp "worker ready", imports
# done, and "job received"; the parent "workers started" and "jobs sent"), workers 2, 1, 2, 2, 1, 2 at e1279b0.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; nproc > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
i=0
for w in 2 1 2 2 1 2; do
  i=$((i+1)); run=w${w}_$i
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl & sampler=$!
  timeout 60 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale.jsonl > $OUT/r/scale_$run.log 2>&1; echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler
  for f in $KT_PROFILE_DIR/pipe-worker-*; do grep -q -E "^(time_held|judge_cases|ready_device)" $f || rm -f $f; done; rm -f $KT_PROFILE_DIR/pipe-caller-* $KT_PROFILE_DIR/pipe-compile-*
  (cd $OUT && tar czf runs.tgz r)
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
