# One H200, the session's final code: the judge's comparison kernels prefetched before its cases are made.
# `kt serve`, then softmax and matmul through the command line, twice each, stamped (compare with call 5's
# serve runs: the judge's ready_judge and the first time_held); then the GPU tests that judge, verify, race and
# crash on the device.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0 KT_RESIDENT_DIR=/tmp/ktres
KT() { python3 -c "from kt_cli.cli import main; main()" "$@"; }
rm -rf /tmp/res /tmp/ktres; mkdir -p /tmp/res; mkdir -m 700 /tmp/ktres
nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for d in /tmp/site kt_cli vendor_nvidia plugins $(python3 -c "import triton, os; print(os.path.dirname(triton.__file__))") $(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))"); do python3 -m compileall -q -j 16 $d > /dev/null 2>&1; done
KT tune recipes/matmul.toml --out /tmp/res/art_cold > /tmp/res/cold.log 2>&1; KT tune recipes/softmax.toml --out /tmp/res/art_cold > /tmp/res/cold_sm.log 2>&1; echo "cold runs done"
KT serve --idle 600 | tee /tmp/res/serve.txt
for run in 1 2; do
  for recipe in softmax matmul; do
    T0=$(date +%s.%N)
    KT_PROFILE_DIR=/tmp/res/prof_${recipe}_$run KT tune recipes/$recipe.toml --out /tmp/res/art_${recipe}_$run > /tmp/res/${recipe}_$run.log 2>&1
    echo "$recipe $run: rc $? wall $(python3 -c "print(round($(date +%s.%N) - $T0, 2))") s; $(grep -h 'candidates in' /tmp/res/${recipe}_$run.log | cut -c1-60)"
    python3 benchmarks/experiments/cli_first_results.py recipes/$recipe.toml /tmp/res/art_${recipe}_$run --t0 $T0
    python3 benchmarks/experiments/startup_timeline.py /tmp/res/prof_${recipe}_$run --t0 $T0 --until 5 > /tmp/res/timeline_${recipe}_$run.txt 2>&1
    grep -E "device worker|judge|^CLI" /tmp/res/timeline_${recipe}_$run.txt | cut -c1-200
  done
done
KT serve --stop
(cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k "judge or raced or illegal or timing_record or autotuned" 2>&1 | tail -2
