#!/bin/bash
# Thirtieth session, call 5: FlashAttention-3's ping-pong between the two consumer partitions (OVERLAP = 2: they
# take turns at the tensor cores through two mbarriers), beside every other config, on every shape and both
# grids (benchmarks/gluon_attention.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 500 python3 benchmarks/gluon_attention.py --hang-s 60 --json $OUT/gluon_attention.json > $OUT/gluon_attention.log 2>&1
echo "gluon_attention rc=$?"
grep -A30 "shape     which" $OUT/gluon_attention.log; grep -i "hung\|error" $OUT/gluon_attention.log | cut -c1-300 | head -5
