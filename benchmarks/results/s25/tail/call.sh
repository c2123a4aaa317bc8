# one GPU: why a run's tail paired winners on a fresh device worker (results/s25/scale2b pipes_9). Two cold
# matmul tunes of the working tree (c607b64: a failed pairing is kept in stats.check_pairing_failed), with
# --storage as benchmarks/scale.py runs them, every worker's requests stamped (KT_PROFILE_DIR)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt
for i in 1 2; do
  rm -rf /tmp/ktc /tmp/tc /tmp/o_$i; mkdir -p /tmp/res/pipes_$i /tmp/o_$i
  KT_PROFILE_DIR=/tmp/res/pipes_$i KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc timeout 90 python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --out /tmp/o_$i --storage sqlite:////tmp/o_$i/study.db > /tmp/res/tune_$i.log 2>&1
  tail -2 /tmp/res/tune_$i.log | cut -c1-150
  python3 -c "
import json,sys; m=json.load(open('/tmp/o_$i/matmul.kt/manifest.json'))
for r in m['results']: s=r.get('stats') or {}; print(r['shape_key'], 'check_speedup', s.get('check_speedup'), 'failed', s.get('check_pairing_failed'))" | tee /tmp/res/pairing_$i.txt
  grep -h recheck /tmp/res/pipes_$i/pipe-worker-*.log | head -5
done
cd /tmp/res && tar czf $OUT/all.tgz *
