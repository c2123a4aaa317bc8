# 4x GPU host: kt tune --workers 1, 2 and 4 on the matmul recipe, cold (each run its own Triton cache, kt's
# cache emptied): HEAD (ab_new) against 319e433 (ab_base, the tenth session's end) at four workers,
# alternating; then a longer budget (96 trials a problem) with one and four workers, HEAD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt; nproc
root=$PWD
one() {  # code workers trials
  rm -rf /tmp/ktcache
  (cd $root/ab_$1 && timeout 130 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $2 --trials $3 --json /tmp/res/scale_$1_t$3.jsonl 2>&1 | grep -v "^--workers" | tail -1 | sed "s/^/$1 t$3 /")
}
for r in "new 1 32" "new 4 32" "base 4 32" "new 2 32" "new 1 32" "new 4 32" "base 4 32" "new 1 96" "new 4 96"; do one $r; done
cd /tmp/res && tar czf $OUT/all.tgz *
