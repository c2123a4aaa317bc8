#!/bin/bash
# Thirty-first session: the README's main job and the matmul recipe at the final code (f1bb1d1: the upper bounds
# in the memory terms, which change what measured mode prunes), one H200.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > $OUT/gpu.txt
/usr/bin/time -f "wall %e s" timeout 100 python3 -c "from kt_cli.cli import main; main()" tune recipes/softmax.toml --out /tmp/art_sm > $OUT/tune_softmax.log 2>&1
echo "softmax rc=$?"
timeout 90 python3 benchmarks/run.py --kernels matmul --trials 24 --no-anchors --out /tmp/art_mm --json $OUT/tune_matmul.json > $OUT/tune_matmul.log 2>&1
echo "matmul rc=$?"
