# 2x H100: kt tune --workers on the matmul recipe, warm Triton cache, each kt tune process sampled
# (benchmarks/experiments/stack_sample): the session's start (ab_base = ed24af1) then 89a1f41 (ab_new:
# binary features cached, shared study reads)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt
root=$PWD
for v in base:1,2 new:1,2,1,2; do
  name=${v%%:*}; cd $root/ab_$name
  export KT_STACK_SAMPLE_DIR=/tmp/stacks_$name
  PYTHONPATH=$PWD/benchmarks/experiments/stack_sample:$PWD/plugins:$PYTHONPATH python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers ${v#*:} --trials 32 --warm-cache /tmp/tc_$name --json $OUT/scale_$name.jsonl 2>&1 | grep -v "^--workers" | tail -6
  python3 benchmarks/experiments/stack_report.py /tmp/stacks_$name --top 15 --kt > $OUT/stacks_kt_$name.txt 2>&1
  grep -E "^pid|CPU charged" $OUT/stacks_kt_$name.txt | cut -c1-40,150-200
done
cd /tmp && tar czf $OUT/stacks.tgz stacks_*
