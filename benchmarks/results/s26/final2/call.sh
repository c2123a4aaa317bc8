# One H100, after 110ef27 (a problem ranks by what its first full timing says; a timing ends on that): the measured-mode GPU tests, then cold matmul walls (a fresh Triton cache and an empty kt
# cache each run), the working tree against ee5d0ca (ab_base), alternating, and one softmax run; each
# run's trials and manifest kept, and how many of its full timings were ranked by the ratio.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
root=$PWD
timeout 120 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider -k "timing_record or raced_out or judge or illegal" > /tmp/res/test_gpu.log 2>&1; tail -3 /tmp/res/test_gpu.log
run() {  # name code recipe
  rm -rf /tmp/ktc /tmp/tc /tmp/o_$1; dir=$root/ab_$2; [ $2 = new ] && dir=$root
  (cd $dir && env KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc PYTHONPATH=$dir:$dir/plugins:$PYTHONPATH /usr/bin/time -f "$1 wall %e s" timeout 90 python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > /tmp/res/$1.log 2>&1)
  tail -1 /tmp/res/$1.log; grep -E "this run" /tmp/res/$1.log | cut -c1-200
  find /tmp/o_$1 -name trials.jsonl -exec cp {} /tmp/res/$1.trials.jsonl \;
  find /tmp/o_$1 -name manifest.json -exec cp {} /tmp/res/$1.manifest.json \;
  python3 -c "
import json
ranked = {}
for l in open('/tmp/res/$1.trials.jsonl'):
    r = json.loads(l); s = r.get('stats') or {}
    if r['failure_kind'] == 'ok' and not s.get('raced_out'):
        k = ','.join(str(v) for v in r['shape'].values()); ranked.setdefault(k, [0, 0]); ranked[k][0] += 1; ranked[k][1] += bool(s.get('ranked'))
for e in json.load(open('/tmp/res/$1.manifest.json'))['results']:
    s = e['stats']; k = ','.join(str(v) for v in e['shape'].values())
    print('  ', k, '%.1f us' % (e['seconds'] * 1e6), 'check', s.get('check_speedup') and round(s['check_speedup'], 3), 'full/ranked', ranked.get(k), s.get('check_pairing_failed', '')[:100])
" 2>&1 | head -4
}
for i in 1 2; do for m in new base; do run mm_${m}_$i $m matmul; done; done
run sm_new_1 new softmax
cd /tmp/res && tar czf $OUT/all.tgz *
