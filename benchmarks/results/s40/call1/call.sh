#!/bin/bash
# Thirtieth session, call 1: the Gluon attention's two-consumer configs at D = 128 (wgmma serialised by ptxas),
# newly admitted by the CONSTRAINTS, beside the one-partition configs and SDPA (benchmarks/gluon_attention.py,
# every shape), then a real tune of recipes/attention.toml (benchmarks/run.py) to see what the search picks.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 260 python3 benchmarks/gluon_attention.py --json $OUT/gluon_attention.json > $OUT/gluon_attention.log 2>&1
echo "gluon_attention rc=$?"
timeout 300 python3 benchmarks/run.py --kernels attention --trials 24 --no-anchors --out /tmp/art_att --json $OUT/tune.json > $OUT/tune.log 2>&1
echo "tune rc=$?"
tail -40 $OUT/gluon_attention.log | grep -A20 "shape  "; tail -25 $OUT/tune.log
