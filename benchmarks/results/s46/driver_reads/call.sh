#!/bin/bash
# 2x H200 host (32 cores). A study's trials read through the database driver's cursor (kt_cli/search/
# trial_reads.py: "new", the checkout) against SQLAlchemy Core's reads ("base", 110ae3b). `kt tune` of the
# matmul recipe at 128 trials a problem, cold, KT_PROFILE_DIR, every study-driving process's CPU sampled from
# /proc (benchmarks/experiments/proc_cpu.py). Two workers and one, alternating codes, twice.
# Before the call: rm -rf _base && mkdir _base && git archive 110ae3b kt_cli plugins recipes benchmarks/scale.py pyproject.toml | tar -x -C _base
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in new_w2_1 base_w2_1 new_w1_1 base_w1_1 base_w2_2 new_w2_2 base_w1_2 new_w1_2; do
  code=${run%%_*}; w=${run#*_w}; w=${w%%_*}
  dir=$PWD; [ $code != new ] && dir=$PWD/_$code
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl & sampler=$!
  (cd $dir && timeout 80 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_$run.log 2>&1); echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler; python3 benchmarks/experiments/proc_cpu.py report $OUT/r/cpu_$run.jsonl | head -1
  rm -f $KT_PROFILE_DIR/pipe-worker-* $KT_PROFILE_DIR/pipe-caller-*
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
