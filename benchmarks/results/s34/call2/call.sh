# One H200: the GPU tests at this session's start code (last run on an H100 in the eighteenth session), then
# benchmarks/run.py on the matmul recipe with Triton's autotune beside it (time to kt's best and to autotune's).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
root=$PWD
timeout 330 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider --durations 8 > /tmp/res/test_gpu.log 2>&1; echo "pytest rc $?"; tail -16 /tmp/res/test_gpu.log | cut -c1-250
cd /tmp/res && tar czf $OUT/runs.tgz *; cd $root
export CUDA_VISIBLE_DEVICES=0
timeout 220 python3 benchmarks/run.py --kernels matmul --autotune --json /tmp/res/bench_matmul_h200_s34.json --out /tmp/res/art > /tmp/res/run.log 2>&1; echo "run rc $?"; grep -v -i warn /tmp/res/run.log | tail -20 | cut -c1-220
cd /tmp/res && tar czf $OUT/runs.tgz --exclude=art *
