# 4x H100: kt tune --workers 1 then 4 on the matmul recipe, cold, with KT_PROFILE_DIR set: every request's
# stamps on both sides of its pipe (kt_cli/stamps.py), to tell a compile worker's own time from its caller's
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader > /tmp/res/gpu.txt
for w in 1 4; do
  rm -rf /tmp/ktcache; mkdir -p /tmp/res/pipes_w$w
  KT_PROFILE_DIR=/tmp/res/pipes_w$w timeout 170 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 32 --json /tmp/res/scale.jsonl 2>&1 | grep -v "^--workers" | tail -1
done
cd /tmp/res && tar czf $OUT/all.tgz *
