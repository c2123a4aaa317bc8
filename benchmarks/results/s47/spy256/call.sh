#!/bin/bash
# 2x H200 host (32 cores), the checkout (182d578): where a study-driving process's CPU goes at 256 trials a problem,
# where those processes ran at 101-129% of a CPU (results/s47/longer). `kt tune` of the matmul recipe, cold,
# KT_PROFILE_DIR; each study-driving process recorded by py-spy from its first stamp (100 Hz, raw, --nonblocking)
# and its CPU sampled from /proc. Two workers, then one. Read with benchmarks/experiments/spy_cpu.py
# r/pipes_RUN/spy-PID.txt:TRIALS and proc_cpu.py report.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
python3 -m pip install -q --no-index --no-deps --target /tmp/spy .whl/py_spy-*.whl || exit 5
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; nproc > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in w2_1 w1_1; do w=${run:1:1}
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl --spy /tmp/spy/bin/py-spy & sampler=$!
  timeout 110 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 256 --json $OUT/r/scale.jsonl > $OUT/r/scale_$run.log 2>&1; echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler; sleep 1; python3 benchmarks/experiments/proc_cpu.py report $OUT/r/cpu_$run.jsonl
  rm -f $KT_PROFILE_DIR/pipe-worker-* $KT_PROFILE_DIR/pipe-caller-*; ls -la $KT_PROFILE_DIR | grep spy
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
