# One H200: `kt serve` (a resident fork server with torch imported) against each kt process starting its own,
# alternating, twice, after one cold run that fills the Triton cache: the matmul recipe at 32 trials a problem
# beside Triton's autotune (time to its result, issue 16), then `kt tune recipes/softmax.toml` with its start
# stamped (KT_PROFILE_DIR) and read by startup_timeline.py.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0 KT_RESIDENT_DIR=/tmp/ktres
KT() { python3 -c "from kt_cli.cli import main; main()" "$@"; }
rm -rf /tmp/res /tmp/ktres; mkdir -p /tmp/res; mkdir -m 700 /tmp/ktres
nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
timeout 150 python3 benchmarks/run.py --kernels matmul --trials 32 --out /tmp/res/art_0 --json /tmp/res/bench_cold.json > /tmp/res/cold.log 2>&1; echo "cold rc $?"
t0=$(date +%s.%N); KT serve --idle 900 | tee /tmp/res/serve.txt; echo "kt serve returned after $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s"
for i in 1 2; do
  for mode in alone serve; do
    if [ $mode = alone ]; then export KT_RESIDENT=0; else unset KT_RESIDENT; fi
    timeout 150 python3 benchmarks/run.py --kernels matmul --trials 32 --autotune --out /tmp/res/art_${mode}_$i --json /tmp/res/bench_${mode}_$i.json > /tmp/res/autotune_${mode}_$i.log 2>&1; echo "matmul $mode $i rc $?"
    python3 benchmarks/report.py /tmp/res/bench_${mode}_$i.json 2>/dev/null | grep -i "autotune (" | cut -c1-300
    python3 -c "
import json; d = json.load(open('/tmp/res/bench_${mode}_$i.json'))
for e in d['kernels']:
    p = e.get('progress') or {}
    print('first result', {k: round(min(t for t, _ in v), 2) for k, v in p.items() if v}, 'wall', e.get('wall_s'))" 2>&1 | tail -3
    T0=$(date +%s.%N)
    KT_PROFILE_DIR=/tmp/res/prof_softmax_${mode}_$i KT tune recipes/softmax.toml --out /tmp/res/sm_${mode}_$i > /tmp/res/softmax_${mode}_$i.log 2>&1
    echo "softmax $mode $i: rc $? wall $(python3 -c "print(round($(date +%s.%N) - $T0, 2))") s"
    python3 benchmarks/experiments/startup_timeline.py /tmp/res/prof_softmax_${mode}_$i --t0 $T0 --until 6 > /tmp/res/timeline_softmax_${mode}_$i.txt 2>&1
    head -30 /tmp/res/timeline_softmax_${mode}_$i.txt | cut -c1-200
    (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' --exclude='sm_*' *)
  done
done
unset KT_RESIDENT; KT serve --status; KT serve --stop
