# A 4x H100 host (asked as nvidia-h100-x4): the final code (fair slots; a trial starts only when the budget,
# read once the slot is held, has units left beyond the trials still deciding): the matmul recipe with 1
# and 4 workers at 128 trials a problem, then at 32; each run cold.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
timeout 170 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,4 --trials 128 --json /tmp/res/scale128.jsonl > /tmp/res/scale128.log 2>&1; echo "128 rc $?"; tail -3 /tmp/res/scale128.log
cd /tmp/res && tar czf $OUT/runs.tgz *; cd - >/dev/null
timeout 110 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,4 --trials 32 --json /tmp/res/scale32.jsonl > /tmp/res/scale32.log 2>&1; echo "32 rc $?"; tail -3 /tmp/res/scale32.log
cd /tmp/res && tar czf $OUT/runs.tgz *
