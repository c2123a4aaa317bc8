# 2x H100: kt tune --workers 1,2,1,2 on the matmul recipe, each run with a Triton cache of its own (cold)
# and kt's binary-features cache emptied, every kt tune process sampled (code: ab_new = HEAD at the call)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt
cd ab_new
for w in 1 2 1 2; do
  rm -rf /tmp/ktcache
  KT_STACK_SAMPLE_DIR=/tmp/stacks PYTHONPATH=$PWD/benchmarks/experiments/stack_sample:$PYTHONPATH timeout 170 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 32 --json $OUT/scale.jsonl 2>&1 | grep -v "^--workers" | tail -1
done
python3 benchmarks/experiments/stack_report.py /tmp/stacks --top 15 --kt > $OUT/stacks_kt.txt 2>&1
grep -E "^pid|CPU charged" $OUT/stacks_kt.txt | cut -c1-40,150-200
