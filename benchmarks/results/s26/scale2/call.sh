# 2x GPU host (asked as nvidia-h100-x2), the final code: `kt tune --workers 2` against one worker on the
# matmul recipe (benchmarks/scale.py, cold), the workers' candidates ranked by their ratio to cuBLAS, each
# process at its own reference; each run's unpaired winners printed (none expected)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt
for w in 2 1; do
  rm -rf /tmp/ktcache
  timeout 100 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 32 --json /tmp/res/scale.jsonl 2>&1 | grep -v "^--workers" | tail -3 | sed "s/^/w$w /"
done
cd /tmp/res && tar czf $OUT/all.tgz *
