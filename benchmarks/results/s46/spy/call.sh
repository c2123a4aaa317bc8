#!/bin/bash
# 2x H200 host (32 cores), the checkout (110ae3b + proc_cpu.py's --spy): where a kt process's CPU goes with one
# worker and with two. `kt tune` of the matmul recipe at 128 trials a problem, cold, KT_PROFILE_DIR; each study-
# driving process is recorded by py-spy from when it writes its first stamp (100 Hz, raw, --nonblocking) and its
# CPU sampled from /proc. Two workers, one, two, one. Read with benchmarks/experiments/spy_cpu.py
# r/pipes_RUN/spy-PID.txt:TRIALS and proc_cpu.py report.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
python3 -m pip install -q --no-index --no-deps --target /tmp/spy .whl/py_spy-*.whl || exit 5
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in w2_1 w1_1 w2_2 w1_2; do w=${run:1:1}
  export KT_PROFILE_DIR=$OUT/r/pipes_$run; mkdir -p $KT_PROFILE_DIR
  python3 benchmarks/experiments/proc_cpu.py sample $KT_PROFILE_DIR $OUT/r/cpu_$run.jsonl --spy /tmp/spy/bin/py-spy & sampler=$!
  timeout 80 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale.jsonl > $OUT/r/scale_$run.log 2>&1; echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  kill $sampler; sleep 1; python3 benchmarks/experiments/proc_cpu.py report $OUT/r/cpu_$run.jsonl
  rm -f $KT_PROFILE_DIR/pipe-worker-* $KT_PROFILE_DIR/pipe-caller-*; ls -la $KT_PROFILE_DIR | grep spy
done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
