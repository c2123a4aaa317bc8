# One H100, the final split-K code (a grid a multiple of the splits, 64-column epilogue slices, partials
# added in a loop): the Gluon GEMM GPU tests, then mm1000.py --split at 256x2048x8192 and 1000^3.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu.py -k "gluon_gemm" -p no:cacheprovider > /tmp/res/test_gpu_gemm.log 2>&1; tail -3 /tmp/res/test_gpu_gemm.log | cut -c1-300
cd benchmarks/experiments
for s in 256x2048x8192 1000 512x512x16384; do timeout 80 python3 mm1000.py $s --split > /tmp/res/mm_split_$s.log 2>&1; echo "$s rc $? wrong $(grep -c WRONG /tmp/res/mm_split_$s.log)"; grep -v "^{\|^    \|WRONG" /tmp/res/mm_split_$s.log | head -4 | cut -c1-120; done
cd /tmp/res && tar czf $OUT/runs.tgz *
