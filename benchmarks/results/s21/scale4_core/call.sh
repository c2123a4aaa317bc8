# 4x H100: kt tune --workers 4 and 1 on the matmul recipe, cold (each run its own Triton cache, kt's cache
# emptied), trials read with the ORM (ab_base = 63cd01b) against SQLAlchemy Core (ab_new), alternating
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader > /tmp/res/gpu.txt; nproc
root=$PWD
for w in 4 1 4; do for code in new base; do
  rm -rf /tmp/ktcache
  (cd $root/ab_$code && timeout 170 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 32 --json /tmp/res/scale_$code.jsonl 2>&1 | grep -v "^--workers" | tail -1 | sed "s/^/$code: /")
done; done
cd /tmp/res && tar czf $OUT/all.tgz *
