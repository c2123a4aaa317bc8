# One H100: where a screen's time goes with the baseline's graph kept (screen_cost.py, kept against fresh
# in one timer), the GPU tests of the timer and the measured path, then cold matmul walls, the working
# tree against 4f787fb (ab_base), alternating, and one softmax run; each run's trials and manifest kept.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
root=$PWD
(cd benchmarks/experiments && timeout 150 python3 screen_cost.py --json /tmp/res/screen_cost.json > /tmp/res/screen_cost.log 2>&1); grep -E "screen|capture|samplers" /tmp/res/screen_cost.log
timeout 150 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider -k "kept_baseline or timing_record or raced_out or judge or second_gpu or copy_below" > /tmp/res/test_gpu.log 2>&1; tail -3 /tmp/res/test_gpu.log
run() {  # name code recipe
  rm -rf /tmp/ktc /tmp/tc /tmp/o_$1; dir=$root/ab_$2; [ $2 = new ] && dir=$root
  (cd $dir && env KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc PYTHONPATH=$dir:$dir/plugins:$PYTHONPATH /usr/bin/time -f "$1 wall %e s" timeout 90 python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > /tmp/res/$1.log 2>&1)
  tail -1 /tmp/res/$1.log; grep -E "this run" /tmp/res/$1.log | cut -c1-200
  find /tmp/o_$1 -name trials.jsonl -exec cp {} /tmp/res/$1.trials.jsonl \;
  find /tmp/o_$1 -name manifest.json -exec cp {} /tmp/res/$1.manifest.json \;
  python3 -c "
import json, statistics
screens = {}
for l in open('/tmp/res/$1.trials.jsonl'):
    r = json.loads(l); s = r.get('stats') or {}
    if s.get('raced_out'):
        screens.setdefault(r['shape']['M'], []).append(r['phase_seconds'].get('screen', 0))
for e in json.load(open('/tmp/res/$1.manifest.json'))['results']:
    s = e['stats']
    print('  ', e['shape']['M'], '%.1f us' % (e['seconds'] * 1e6), 'check', s.get('check_speedup') and round(s['check_speedup'], 3), s.get('check_pairing_failed', '')[:100])
print('   raced-out screens (median s):', {m: round(statistics.median(v), 4) for m, v in screens.items()})
" 2>&1 | head -5
}
for i in 1 2; do for m in new base; do run mm_${m}_$i $m matmul; done; done
run sm_new_1 new softmax
cd /tmp/res && tar czf $OUT/runs.tgz *
