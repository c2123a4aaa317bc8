# A 2x H100 host (a 4x was refused), HEAD 7efe2c6: `kt tune --workers W` on the matmul recipe at its own budget (32 trials a
# problem) and at four times it (128), cold, to separate the start (first compiles, each process's first
# full timings) from the steady rate: does the rate of 2 GPUs add up once the start is amortised?
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
timeout 330 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2,1,2 --trials 128 --json /tmp/res/scale128.jsonl > /tmp/res/scale128.log 2>&1; echo "rc $?"; tail -6 /tmp/res/scale128.log
timeout 150 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2 --trials 32 --json /tmp/res/scale32.jsonl > /tmp/res/scale32.log 2>&1; echo "rc $?"; tail -5 /tmp/res/scale32.log
cd /tmp/res && tar czf $OUT/runs.tgz *
