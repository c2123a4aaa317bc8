# 2x GPU host (no 4x host was lent): benchmarks/scale.py on the matmul recipe, cold (each run its own
# Triton cache, kt's cache emptied), alternating f67cd0d (ab_base) and 13b7452 (ab_new: the judge's kernels
# load in the background; a full timing's baseline rides along until tight or 80 samples); then one stamped
# run (KT_PROFILE_DIR) of ab_new at one and at two workers: what the run's start and tail wait for
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt; nproc
root=$PWD; n=0
one() {  # code workers trials [stamps]
  rm -rf /tmp/ktcache; n=$((n+1)); json=/tmp/res/scale_$1_t$3.jsonl
  [ -n "$4" ] && { mkdir -p /tmp/res/pipes_$n; export KT_PROFILE_DIR=/tmp/res/pipes_$n; json=/tmp/res/stamped_$1_w$2.jsonl; }
  (cd $root/ab_$1 && timeout 75 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $2 --trials $3 --json $json 2>&1 | grep -v "^--workers" | tail -1 | sed "s/^/$n $1 t$3 /")
  unset KT_PROFILE_DIR
}
for r in "new 2 32" "base 2 32" "new 1 32" "base 1 32" "new 2 32" "base 2 32" "new 1 32" "base 1 32" "new 1 32 s" "new 2 32 s"; do one $r; done
cd /tmp/res && tar czf $OUT/all.tgz *
