#!/bin/bash
# Thirty-second session, an nvidia-h200-x2 host (listed by `status` at 13:12 UTC): `kt tune --workers 2` against one
# worker on the matmul recipe (issue 16's >= 1.8x), alternating, cold; then the GPU tests that need two GPUs.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt; nproc >> $OUT/gpu.txt; cat $OUT/gpu.txt
timeout 250 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2,1,2 --trials 32 --json $OUT/scale32.jsonl > $OUT/scale32.log 2>&1; echo "scale32 rc=$?"; tail -8 $OUT/scale32.log
timeout 200 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2 --trials 128 --json $OUT/scale128.jsonl > $OUT/scale128.log 2>&1; echo "scale128 rc=$?"; tail -6 $OUT/scale128.log
