#!/bin/bash
# Thirtieth session, call 7: Nsight Compute counters of the Gluon attention at the final code, two consumers taking turns (the best configs
# of call 5 on the grid kt launches; full D128 persistent) beside SDPA.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
cd benchmarks/experiments && timeout 560 python3 tile_ncu.py --json $OUT/tile_ncu.json --only attn_full_d128_kt attn_full_d128_1p_kt attn_full_d128_sdpa attn_causal_d128_kt attn_causal_d128_sdpa attn_causal_d64_kt attn_causal_d64_sdpa attn_gqa8_d128_kt attn_gqa8_d128_sdpa > $OUT/tile_ncu.log 2>&1
echo "ncu rc=$?"; cut -c1-300 $OUT/tile_ncu.log
