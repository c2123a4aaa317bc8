#!/bin/bash
# Thirty-third session: the GPU tests at the code of the pruning rule that learns the model's error
# (kt_cli/evaluate/pruning.py), which measured mode applies.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 500 python3 -m pytest -q -m gpu tests/test_gpu.py > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"
tail -5 $OUT/gpu_tests.log
