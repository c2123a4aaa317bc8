# 4x H100: kt tune --workers 1 then 4 (then 1 again) on the matmul recipe, cold, every kt tune process
# sampled by benchmarks/experiments/stack_sample (code: ab_new = HEAD at the call)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > /tmp/gpu.txt; nproc
cd ab_new; mkdir -p /tmp/res; cp /tmp/gpu.txt /tmp/res/
for w in 1 4 1; do
  rm -rf /tmp/ktcache
  KT_STACK_SAMPLE_DIR=/tmp/res/stacks_w${w}_$RANDOM PYTHONPATH=$PWD/benchmarks/experiments/stack_sample:$PYTHONPATH timeout 170 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 32 --json /tmp/res/scale.jsonl 2>&1 | grep -v "^--workers" | tail -1
done
cd /tmp/res && tar czf $OUT/all.tgz *
