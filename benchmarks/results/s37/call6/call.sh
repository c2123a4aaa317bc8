# One H200: where benchmarks/run.py's in-process tune (torch imported, CUDA started, its fork server up from the
# ceilings' worker) spends the seconds before its first result: the matmul recipe at 32 trials with autotune,
# twice (the first on empty caches), bytecode written, every step stamped (KT_PROFILE_DIR).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res
nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for d in /tmp/site kt_cli vendor_nvidia plugins $(python3 -c "import triton, os; print(os.path.dirname(triton.__file__))") $(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))"); do python3 -m compileall -q -j 16 $d > /dev/null 2>&1; done
for i in 1 2; do
  KT_PROFILE_DIR=/tmp/res/prof_$i timeout 150 python3 benchmarks/run.py --kernels matmul --trials 32 --autotune --out /tmp/res/art_$i --json /tmp/res/bench_$i.json > /tmp/res/run_$i.log 2>&1; echo "run $i rc $?"
  python3 benchmarks/report.py /tmp/res/bench_$i.json 2>/dev/null | grep -i "autotune (" | cut -c1-300
  t=$(head -1 /tmp/res/prof_$i/pipe-cli-*.log | awk '{print $2}')
  python3 benchmarks/experiments/startup_timeline.py /tmp/res/prof_$i --t0 $t --until 4 | cut -c1-220
  python3 -c "
import json; d = json.load(open('/tmp/res/bench_$i.json'))
for e in d['kernels']:
    print('first result after the tune mark (s):', {k: round(min(t for t, _ in v), 2) for k, v in (e.get('progress') or {}).items() if v})"
done
(cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
