#!/bin/bash
# Twenty-ninth session: the GPU tests at the session's final model (the tile fill, pruning on upper bounds).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
python3 -m compileall -q /tmp/site kt_cli vendor_nvidia plugins >/dev/null 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 560 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -x --durations=30 > $OUT/pytest_gpu.txt 2>&1; echo "rc $?"
tail -45 $OUT/pytest_gpu.txt
