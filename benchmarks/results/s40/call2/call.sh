#!/bin/bash
# Thirtieth session, call 2: the Gluon attention made persistent (a program per SM walking the query tiles,
# its K/V ring running on from tile to tile). benchmarks/gluon_attention.py times every config on the
# persistent grid and on a program per tile (the kernel's old grid) in one run, on every shape; then the GPU
# test of the Gluon attention through kt's measured path (one and two consumer partitions).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 330 python3 benchmarks/gluon_attention.py --json $OUT/gluon_attention.json > $OUT/gluon_attention.log 2>&1
echo "gluon_attention rc=$?"
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu.py -k gluon_attention > $OUT/gpu_test.log 2>&1
echo "gpu test rc=$?"
grep -A30 "shape     which" $OUT/gluon_attention.log; tail -3 $OUT/gpu_test.log
