# A 4x H100 host, the session's final code: `kt tune --workers 4` against one worker on the matmul recipe,
# cold, alternating 1, 4, 1, 4 (issue 16's 3.5x target; 1.33x and 1.74x at the fifteenth session's base).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
timeout 540 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,4,1,4 --trials 32 --json /tmp/res/scale.jsonl > /tmp/res/scale.log 2>&1; echo "rc $?"; tail -8 /tmp/res/scale.log
python3 -c "
import json
for l in open('/tmp/res/scale.jsonl'):
    r = json.loads(l); print(r['workers'], r['trials'], round(r['per_min'], 1), round(r['middle_per_min'], 1), round(r['wall_s'], 1), 'unpaired', list(r.get('unpaired', {})))
"
cd /tmp/res && tar czf $OUT/runs.tgz *
