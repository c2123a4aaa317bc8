# One H100: the Gluon GEMM's in-kernel K splits where M x N is small and K long (issue 19).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
cd benchmarks/experiments
for s in 512x512x16384 1024x1024x8192 256x2048x8192; do timeout 100 python3 mm1000.py $s --split > /tmp/res/mm_split_$s.log 2>&1; echo "$s rc $?"; grep -v "^{\|^    \|WRONG" /tmp/res/mm_split_$s.log | head -6 | cut -c1-120; grep -c WRONG /tmp/res/mm_split_$s.log; done
cd /tmp/res && tar czf $OUT/runs.tgz *
