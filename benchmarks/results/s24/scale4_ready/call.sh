# 4x GPU host: kt tune --workers 4 and 1 on the matmul recipe, cold, alternating 629a8da (ab_head: a
# problem's device worker and judge ready at once; ready_device computes Triton's key) and f0b8dac (ab_prev)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt; nproc
root=$PWD
one() {  # code workers trials
  rm -rf /tmp/ktcache
  (cd $root/ab_$1 && timeout 75 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $2 --trials $3 --json /tmp/res/scale_$1_t$3.jsonl 2>&1 | grep -v "^--workers" | tail -1 | sed "s/^/$1 t$3 /")
}
for r in "head 4 32" "prev 4 32" "head 1 32" "prev 1 32" "head 4 32" "prev 4 32"; do one $r; done
cd /tmp/res && tar czf $OUT/all.tgz *
