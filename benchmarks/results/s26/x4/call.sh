# 4x GPU host (asked as nvidia-h100-x4). First the timing-series experiment on GPU 0
# (benchmarks/experiments/ratio_stop.py: 30 matmul and 16 softmax configs of the fourteenth session's
# runs, 640 pairs each with the baseline, two passes), then benchmarks/scale.py on the matmul recipe with
# 1 and 4 workers (cold: each run its own Triton cache, kt's cache emptied), alternating, at ee5d0ca+.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt; nproc
start=$(date +%s)
R=benchmarks/results/s26
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 benchmarks/experiments/ratio_stop.py --recipe recipes/matmul.toml --points $R/points_matmul.jsonl --json /tmp/res/ratio_mm.json > /tmp/res/ratio_mm.log 2>&1; tail -16 /tmp/res/ratio_mm.log
CUDA_VISIBLE_DEVICES=0 timeout 60 python3 benchmarks/experiments/ratio_stop.py --recipe recipes/softmax.toml --points $R/points_softmax.jsonl --json /tmp/res/ratio_sm.json > /tmp/res/ratio_sm.log 2>&1; tail -8 /tmp/res/ratio_sm.log
one() {  # workers trials
  rm -rf /tmp/ktcache
  timeout 100 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $1 --trials $2 --json /tmp/res/scale_t$2.jsonl 2>&1 | grep -v "^--workers" | tail -3 | sed "s/^/w$1 t$2 /"
}
for r in "1 32" "4 32" "1 32" "4 32"; do
  [ $(( $(date +%s) - start )) -gt 470 ] && break
  one $r
done
cd /tmp/res && tar czf $OUT/all.tgz *
