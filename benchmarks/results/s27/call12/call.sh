# One H100: one replay of the flushes alone a round of graph-timed samples (the working tree) against the
# code before it (ab_base = the previous commit): GPU timing tests, screen_cost.py, then cold matmul walls
# alternating, two each.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
root=$PWD
timeout 150 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider -k "kept_baseline or timing_record or raced_out or copy_below" > /tmp/res/test_gpu.log 2>&1; tail -3 /tmp/res/test_gpu.log
(cd benchmarks/experiments && timeout 150 python3 screen_cost.py --json /tmp/res/screen_cost.json > /tmp/res/screen_cost.log 2>&1); grep -E "screen " /tmp/res/screen_cost.log
cd /tmp/res && tar czf $OUT/runs.tgz *; cd $root
run() {  # name code recipe
  rm -rf /tmp/ktc /tmp/tc /tmp/o_$1; dir=$root/ab_$2; [ $2 = new ] && dir=$root
  (cd $dir && env KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc PYTHONPATH=$dir:$dir/plugins:$PYTHONPATH /usr/bin/time -f "$1 wall %e s" timeout 90 python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > /tmp/res/$1.log 2>&1)
  tail -1 /tmp/res/$1.log; grep -E "this run" /tmp/res/$1.log | cut -c1-120
  find /tmp/o_$1 -name trials.jsonl -exec cp {} /tmp/res/$1.trials.jsonl \;
  find /tmp/o_$1 -name manifest.json -exec cp {} /tmp/res/$1.manifest.json \;
  python3 -c "
import json, statistics
screens = {}
for l in open('/tmp/res/$1.trials.jsonl'):
    r = json.loads(l); s = r.get('stats') or {}
    if s.get('raced_out'):
        screens.setdefault(list(r['shape'].values())[0], []).append(r['phase_seconds'].get('screen', 0))
print('   best', [(list(e['shape'].values())[0], round(e['seconds'] * 1e6, 1), e['stats'].get('check_speedup') and round(e['stats']['check_speedup'], 3)) for e in json.load(open('/tmp/res/$1.manifest.json'))['results']])
print('   raced-out screens (median s):', {m: round(statistics.median(v), 4) for m, v in screens.items()}, 'all', round(statistics.median([x for v in screens.values() for x in v]), 4))
" 2>&1 | head -3
}
for i in 1 2; do for m in new base; do run mm_${m}_$i $m matmul; done; done
cd /tmp/res && tar czf $OUT/runs.tgz *
