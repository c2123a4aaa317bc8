# 2x GPU host (a 4x host was not lent): benchmarks/scale.py on the matmul recipe, cold (each run its own Triton cache, kt's cache
# emptied), alternating f67cd0d (ab_base), 4784cb2 (ab_new: the judge's kernels load in the background)
# and ab_small (ab_new with half the compile workers per process when several kt processes share the host,
# the trials in flight unchanged); the host's CPU (/proc/stat) sampled every 0.5 s during each run
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt; nproc
root=$PWD; n=0
one() {  # code workers trials
  rm -rf /tmp/ktcache; n=$((n+1))
  (while :; do echo "$(date +%s.%N) $(head -1 /proc/stat)"; sleep 0.5; done > /tmp/res/cpu_${n}_$1_w$2.txt) & sampler=$!
  (cd $root/ab_$1 && timeout 75 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $2 --trials $3 --json /tmp/res/scale_$1_t$3.jsonl 2>&1 | grep -v "^--workers" | tail -1 | sed "s/^/$n $1 t$3 /")
  kill $sampler
}
for r in "new 2 32" "base 2 32" "small 2 32" "new 1 32" "base 1 32" "new 2 32" "base 2 32" "small 2 32" "new 1 32" "base 1 32"; do one $r; done
cd /tmp/res && tar czf $OUT/all.tgz *
