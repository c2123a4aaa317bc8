# One H200: a command-line `kt tune` with `kt serve` (resident fork server) and without, alternating, twice each,
# for the matmul recipe (32 trials a problem) and the softmax recipe, after Python's bytecode was written for
# kt's dependencies (pip's default; the wheels here are installed with --no-compile and PYTHONDONTWRITEBYTECODE
# is set, so each process compiled Optuna, SQLAlchemy and Triton from source); Triton's autotune timed by
# benchmarks/run.py --autotune in the same call, for its time and tuning wall.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0 KT_RESIDENT_DIR=/tmp/ktres
KT() { python3 -c "from kt_cli.cli import main; main()" "$@"; }
rm -rf /tmp/res /tmp/ktres; mkdir -p /tmp/res; mkdir -m 700 /tmp/ktres
nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
echo "PYTHONDONTWRITEBYTECODE=$PYTHONDONTWRITEBYTECODE"; env -u PYTHONDONTWRITEBYTECODE python3 -c "import triton, torch, os; print('triton pyc:', os.path.isdir(os.path.join(os.path.dirname(triton.__file__), '__pycache__')), 'torch pyc:', os.path.isdir(os.path.join(os.path.dirname(torch.__file__), '__pycache__')))"
T=$(date +%s.%N); for d in /tmp/site kt_cli vendor_nvidia plugins $(python3 -c "import triton, os; print(os.path.dirname(triton.__file__))") $(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))"); do python3 -m compileall -q -j 16 $d > /dev/null 2>&1; done; echo "compileall $(python3 -c "print(round($(date +%s.%N) - $T, 1))") s"
python3 - <<'PY' 2>&1 | tee /tmp/res/imports.txt
import time; t = time.perf_counter(); import torch; a = time.perf_counter()
import triton; b = time.perf_counter(); import optuna, sqlalchemy, alembic.command; c = time.perf_counter()
print(f"with bytecode: import torch {a - t:.2f} s, triton {b - a:.2f} s, optuna+sqlalchemy+alembic {c - b:.2f} s")
PY
timeout 150 python3 benchmarks/run.py --kernels matmul --trials 32 --autotune --out /tmp/res/art_0 --json /tmp/res/bench_autotune.json > /tmp/res/autotune.log 2>&1; echo "run.py rc $?"
python3 benchmarks/report.py /tmp/res/bench_autotune.json 2>/dev/null | grep -i "autotune (" | cut -c1-300
KT serve --idle 900 | tee /tmp/res/serve.txt
for i in 1 2; do
  for mode in alone serve; do
    if [ $mode = alone ]; then export KT_RESIDENT=0; else unset KT_RESIDENT; fi
    T0=$(date +%s.%N)
    KT_PROFILE_DIR=/tmp/res/prof_mm_${mode}_$i KT tune recipes/matmul.toml --out /tmp/res/mm_${mode}_$i > /tmp/res/matmul_${mode}_$i.log 2>&1
    echo "matmul $mode $i: rc $? wall $(python3 -c "print(round($(date +%s.%N) - $T0, 2))") s; $(grep -h 'candidates in' /tmp/res/matmul_${mode}_$i.log | cut -c1-60)"
    python3 benchmarks/experiments/cli_first_results.py recipes/matmul.toml /tmp/res/mm_${mode}_$i --t0 $T0 --autotune /tmp/res/bench_autotune.json
    python3 benchmarks/experiments/startup_timeline.py /tmp/res/prof_mm_${mode}_$i --t0 $T0 --until 5 > /tmp/res/timeline_mm_${mode}_$i.txt 2>&1
    grep -E "^CLI|first sent" /tmp/res/timeline_mm_${mode}_$i.txt | cut -c1-220
    T0=$(date +%s.%N)
    KT_PROFILE_DIR=/tmp/res/prof_sm_${mode}_$i KT tune recipes/softmax.toml --out /tmp/res/sm_${mode}_$i > /tmp/res/softmax_${mode}_$i.log 2>&1
    echo "softmax $mode $i: rc $? wall $(python3 -c "print(round($(date +%s.%N) - $T0, 2))") s"
    python3 benchmarks/experiments/cli_first_results.py recipes/softmax.toml /tmp/res/sm_${mode}_$i --t0 $T0
    python3 benchmarks/experiments/startup_timeline.py /tmp/res/prof_sm_${mode}_$i --t0 $T0 --until 5 > /tmp/res/timeline_sm_${mode}_$i.txt 2>&1
    (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' --exclude='sm_*' --exclude='mm_*' *)
  done
done
unset KT_RESIDENT; KT serve --stop
cat /tmp/res/timeline_sm_serve_2.txt | cut -c1-220
