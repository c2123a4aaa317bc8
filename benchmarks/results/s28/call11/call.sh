# One H100: the Gluon GEMM GPU tests with the split-K counters zeroed every call (call 10's per-stream
# counters were rejected: launch may not ask for its stream), then mm1000.py --split at 256x2048x8192.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu.py -k "gluon_gemm" -p no:cacheprovider > /tmp/res/test_gpu_gemm.log 2>&1; tail -3 /tmp/res/test_gpu_gemm.log | cut -c1-300
cd benchmarks/experiments && timeout 80 python3 mm1000.py 256x2048x8192 --split > /tmp/res/mm_split.log 2>&1; echo "rc $? wrong $(grep -c WRONG /tmp/res/mm_split.log)"; grep -v "^{\|^    \|WRONG" /tmp/res/mm_split.log | head -4 | cut -c1-120
cd /tmp/res && tar czf $OUT/runs.tgz *
