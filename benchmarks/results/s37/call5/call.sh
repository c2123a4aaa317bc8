# One H200, the session's final code (the device's worker and judge forked before the compile pool): a
# command-line `kt tune` with `kt serve` twice and without once, for the matmul and softmax recipes, bytecode
# written as in call 3; and Triton's autotune run the way a script runs it from a fresh process
# (benchmarks/experiments/autotune_fresh.py), warm Triton caches for both.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0 KT_RESIDENT_DIR=/tmp/ktres
KT() { python3 -c "from kt_cli.cli import main; main()" "$@"; }
rm -rf /tmp/res /tmp/ktres; mkdir -p /tmp/res; mkdir -m 700 /tmp/ktres
nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for d in /tmp/site kt_cli vendor_nvidia plugins $(python3 -c "import triton, os; print(os.path.dirname(triton.__file__))") $(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))"); do python3 -m compileall -q -j 16 $d > /dev/null 2>&1; done
for size in 8192 4096 8192 4096 8192 4096; do T0=$(date +%s.%N); python3 benchmarks/experiments/autotune_fresh.py --t0 $T0 --size $size 2>&1 | tail -1 | cut -c1-400; done | tee /tmp/res/autotune_fresh.txt
KT_RESIDENT=0 KT tune recipes/matmul.toml --out /tmp/res/mm_cold > /tmp/res/matmul_cold.log 2>&1; echo "cold matmul rc $?"
KT serve --idle 900 | tee /tmp/res/serve.txt
for run in serve_1 alone_1 serve_2; do
  mode=${run%_*}; if [ $mode = alone ]; then export KT_RESIDENT=0; else unset KT_RESIDENT; fi
  for recipe in matmul softmax; do
    T0=$(date +%s.%N)
    KT_PROFILE_DIR=/tmp/res/prof_${recipe}_$run KT tune recipes/$recipe.toml --out /tmp/res/art_${recipe}_$run > /tmp/res/${recipe}_$run.log 2>&1
    echo "$recipe $run: rc $? wall $(python3 -c "print(round($(date +%s.%N) - $T0, 2))") s; $(grep -h 'candidates in' /tmp/res/${recipe}_$run.log | cut -c1-60)"
    python3 benchmarks/experiments/cli_first_results.py recipes/$recipe.toml /tmp/res/art_${recipe}_$run --t0 $T0
    python3 benchmarks/experiments/startup_timeline.py /tmp/res/prof_${recipe}_$run --t0 $T0 --until 5 > /tmp/res/timeline_${recipe}_$run.txt 2>&1
    grep -E "device worker|judge|^CLI" /tmp/res/timeline_${recipe}_$run.txt | cut -c1-200
  done
  (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' --exclude='mm_*' *)
done
unset KT_RESIDENT; KT serve --stop
