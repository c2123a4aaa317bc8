# One H200: the matmul recipe at its own budget (32 trials a problem, recipes/matmul.toml; calls 1-4 ran 24),
# pruning (best first) against no pruning, alternating twice.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for i in 7 8; do
  for m in bestfirst noprune; do
    flag=""; [ $m = noprune ] && flag="--no-prune"
    timeout 45 python3 benchmarks/run.py --kernels matmul --trials 32 --no-anchors $flag --out /tmp/res/art_${m}_$i --json /tmp/res/bench32_${m}_$i.json > /tmp/res/${m}_$i.log 2>&1; echo "$m $i rc $?"; grep '"wall_s"' /tmp/res/${m}_$i.log | cut -c1-120
    (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
  done
done
