# 2x H100: kt tune --workers 1,2,1,2 on the matmul recipe with every binary in a warm Triton cache, each
# kt tune process sampled by benchmarks/experiments/stack_sample (code: ab_new = HEAD at the call)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt; nproc; lscpu | grep -E "^Thread|^Core|^Socket|^Model name"
cd ab_new
export KT_STACK_SAMPLE_DIR=/tmp/stacks
PYTHONPATH=$PWD/benchmarks/experiments/stack_sample:$PYTHONPATH python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2,1,2 --trials 32 --warm-cache /tmp/tc --json $OUT/scale.jsonl 2>&1 | grep -v "^--workers" | tail -6
python3 benchmarks/experiments/stack_report.py /tmp/stacks --top 10 --frames 3 > $OUT/stacks.txt 2>&1
python3 benchmarks/experiments/stack_report.py /tmp/stacks --top 10 --frames 6 > $OUT/stacks6.txt 2>&1
grep -E "^pid|threads on" $OUT/stacks.txt | cut -c1-150
cd /tmp && tar czf $OUT/stacks.tgz stacks
