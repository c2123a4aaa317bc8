# One H200: where a `kt tune`'s start goes once the fork server is resident (`kt serve`) and the devices are
# planned without waiting for Optuna's import: softmax twice with its start stamped, the second with every
# worker request profiled (KT_PROFILE_REQUESTS=1: ready_device, ready_judge, compile), and the imports a
# worker pays after a fork from the resident server (triton, a CUDA context) timed alone.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0 KT_RESIDENT_DIR=/tmp/ktres
KT() { python3 -c "from kt_cli.cli import main; main()" "$@"; }
rm -rf /tmp/res /tmp/ktres; mkdir -p /tmp/res; mkdir -m 700 /tmp/ktres
nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
python3 - <<'PY' 2>&1 | tee /tmp/res/imports.txt
import time; t = time.perf_counter(); import torch; a = time.perf_counter()
import triton; b = time.perf_counter(); torch.zeros(1, device="cuda"); torch.cuda.synchronize(); c = time.perf_counter()
print(f"import torch {a - t:.2f} s, then import triton {b - a:.2f} s, then a CUDA context {c - b:.2f} s (triton {triton.__version__})")
PY
KT tune recipes/softmax.toml --out /tmp/res/sm_warm > /tmp/res/softmax_cold.log 2>&1; echo "cold softmax rc $?"
KT serve --idle 600
for i in 1 2; do
  T0=$(date +%s.%N)
  if [ $i = 2 ]; then export KT_PROFILE_REQUESTS=1; fi
  KT_PROFILE_DIR=/tmp/res/prof_$i KT tune recipes/softmax.toml --out /tmp/res/sm_$i > /tmp/res/softmax_$i.log 2>&1
  echo "softmax serve $i: rc $? wall $(python3 -c "print(round($(date +%s.%N) - $T0, 2))") s"
  python3 benchmarks/experiments/startup_timeline.py /tmp/res/prof_$i --t0 $T0 --until 6 | cut -c1-220
done
for op in ready_device ready_judge compile inspect_module detect_devices; do
  f=$(ls /tmp/res/prof_2/$op-*-1.prof 2>/dev/null | head -1); [ -n "$f" ] || continue
  echo "== $op $f"; python3 -c "import pstats,sys; pstats.Stats(sys.argv[1]).sort_stats('cumulative').print_stats(22)" $f 2>&1 | tail -32 | cut -c1-160
done
KT serve --stop
(cd /tmp/res && tar czf $OUT/runs.tgz --exclude='sm_*' *)
