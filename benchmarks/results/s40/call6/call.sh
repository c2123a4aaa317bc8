#!/bin/bash
# Thirtieth session, call 6, the final code (two consumer partitions take turns by default where a turn's wgmma
# exceed 64 x 64 x 64): the GPU test of the Gluon attention, a real tune of recipes/attention.toml, and
# gluon_attention.py on the four large shapes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 150 python3 -m pytest -q -m gpu tests/test_gpu.py -k gluon_attention > $OUT/gpu_test.log 2>&1
echo "gpu test rc=$?"
timeout 120 python3 benchmarks/run.py --kernels attention --trials 24 --no-anchors --out /tmp/art_att --json $OUT/tune.json > $OUT/tune.log 2>&1
echo "tune rc=$?"
timeout 200 python3 benchmarks/gluon_attention.py --hang-s 60 --shapes s4096_d128_causal s4096_d128_full s4096_d64_causal s4096_d128_causal_gqa8 --json $OUT/gluon_attention.json > $OUT/gluon_attention.log 2>&1
echo "gluon_attention rc=$?"
tail -3 $OUT/gpu_test.log; tail -2 $OUT/tune.log; grep -A20 "shape     which" $OUT/gluon_attention.log
