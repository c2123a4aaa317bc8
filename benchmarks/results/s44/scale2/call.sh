#!/bin/bash
# Thirty-fourth session, an nvidia-h200-x2 host: `kt tune --workers 2` against one worker on the matmul recipe
# (issue 16's >= 1.8x) with the thirty-third session's code (DEVICE_QUEUE = 8), alternating, cold.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; git rev-parse --short HEAD >> $OUT/r/gpu.txt; cat $OUT/r/gpu.txt
timeout 280 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2,1,2 --trials 128 --json $OUT/r/scale128.jsonl > $OUT/r/scale128.log 2>&1; echo "scale128 rc=$?"; tail -7 $OUT/r/scale128.log
timeout 200 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2,1,2 --trials 32 --json $OUT/r/scale32.jsonl > $OUT/r/scale32.log 2>&1; echo "scale32 rc=$?"; tail -7 $OUT/r/scale32.log
tar czf $OUT/runs.tgz -C $OUT r && rm -rf $OUT/r
