#!/bin/bash
# Thirty-fifth session, on an nvidia-h200-x4 host: how long a write transaction holds SQLite's write lock
# (kt_cli/search/lock_holds.py, stamped with KT_PROFILE_DIR), and whether a shorter GIL switch interval in every
# kt process (benchmarks/experiments/switch_interval) shortens the holds and raises four workers' rate. The matmul
# recipe at 128 trials a problem, cold; 5 ms (Python's default) and 0.5 ms alternating, four workers, one and two.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/benchmarks/experiments/switch_interval:/tmp/site
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in w4_1 w1_1 w4_2 w2_1; do w=${run:1:1}; for s in 0.005 0.0005; do
  export KT_PROFILE_DIR=$OUT/r/pipes_${s}_$run KT_SWITCH_INTERVAL_S=$s
  timeout 90 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$s.jsonl > $OUT/r/scale_${s}_$run.log 2>&1; echo "$s $run rc=$? $(tail -1 $OUT/r/scale_${s}_$run.log)"
done; done
unset KT_PROFILE_DIR KT_SWITCH_INTERVAL_S
(cd $OUT && tar czf runs.tgz r && rm -rf r)
