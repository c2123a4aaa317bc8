#!/bin/bash
# Thirtieth session, call 3, the final code: a real tune of recipes/attention.toml (persistent Gluon grid for
# full attention, a program per tile for causal), then the whole GPU test suite.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 120 python3 benchmarks/run.py --kernels attention --trials 24 --no-anchors --out /tmp/art_att --json $OUT/tune.json > $OUT/tune.log 2>&1
echo "tune rc=$?"
timeout 420 python3 -m pytest -q -m gpu tests/test_gpu.py > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"
tail -3 $OUT/tune.log; tail -5 $OUT/gpu_tests.log
