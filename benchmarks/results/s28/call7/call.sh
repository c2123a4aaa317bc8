# One H100 (call 7, after call 6 showed the last-arriving reduction slow): the Gluon GEMM with its K splits reduced in the kernel by the tile's last split (issue 19, GEMM 1000^3 against cuBLAS):
# the direct sweep (benchmarks/experiments/mm1000.py --split, graph-replayed, checked before and after
# timing), then its GPU tests and the other Gluon GEMM tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
root=$PWD
(cd benchmarks/experiments && timeout 200 python3 mm1000.py 1000 --split > /tmp/res/mm1000_split.log 2>&1); echo "sweep rc $?"; grep -v "^{" /tmp/res/mm1000_split.log | head -30 | cut -c1-160
cd /tmp/res && tar czf $OUT/runs.tgz *; cd $root
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu.py -k "gluon_gemm" -p no:cacheprovider > /tmp/res/test_gpu_gemm.log 2>&1; tail -5 /tmp/res/test_gpu_gemm.log | cut -c1-300
cd /tmp/res && tar czf $OUT/runs.tgz *
