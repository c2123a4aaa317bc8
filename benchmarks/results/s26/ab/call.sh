# 2x GPU host (asked as nvidia-h100-x2). (1) One-process `kt tune recipes/matmul.toml` seeing both GPUs:
# ee5d0ca (ab_base: the plan named the last GPU, graphs captured on torch's default capture stream)
# against the working tree (the first GPU, a capture stream of the current device): does each winner
# pair with its reference? (2) Pinned to GPU 0, cold walls (a fresh Triton cache and an empty kt cache
# each run), alternating: the working tree (candidates ranked and raced by their ratio to the baseline
# timed beside them) against ee5d0ca; each run's trials and artifact manifest kept. (3) The GPU tests
# of the two-GPU capture, the timing record, racing and the judge.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
root=$PWD
run() {  # name code recipe [visible devices]
  rm -rf /tmp/ktc /tmp/tc /tmp/o_$1; dir=$root/ab_$2; [ $2 = new ] && dir=$root
  (cd $dir && env ${4:+CUDA_VISIBLE_DEVICES=$4} KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc PYTHONPATH=$dir:$dir/plugins:$PYTHONPATH /usr/bin/time -f "$1 wall %e s" timeout 90 python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > /tmp/res/$1.log 2>&1)
  tail -1 /tmp/res/$1.log; grep -E "this run" /tmp/res/$1.log | cut -c1-200
  find /tmp/o_$1 -name trials.jsonl -exec cp {} /tmp/res/$1.trials.jsonl \;
  find /tmp/o_$1 -name manifest.json -exec cp {} /tmp/res/$1.manifest.json \;
  python3 -c "
import json,sys
for e in json.load(open('/tmp/res/$1.manifest.json'))['results']:
    s=e['stats']; print('  ', e['shape_key'], 'device', (e.get('device') or {}).get('index'), '%.1f us' % (e['seconds']*1e6), 'check', s.get('check_speedup') and round(s['check_speedup'],3), s.get('check_pairing_failed','')[:120])
" 2>&1 | head -4
}
for m in base new; do run mp_$m $m matmul; done
for i in 1 2 3; do for m in new base; do run mm_${m}_$i $m matmul 0; done; done
for m in new base; do run sm_${m}_1 $m softmax 0; done
timeout 150 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider -k "second_gpu or timing_record or raced_out or judge" > /tmp/res/test_gpu.log 2>&1; tail -3 /tmp/res/test_gpu.log
cd /tmp/res && tar czf $OUT/all.tgz *
