# One H100: Nsight Compute counters of the two attention problems call 4 did not profile (causal D128 and
# grouped-query D128, kt's Gluon configs against SDPA), and of the sequence-fused GRU at B 16, H 1024
# (the one problem below 20x the loop), as the twelfth session read the LSTM's.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
(cd benchmarks/experiments && timeout 240 python3 tile_ncu.py --only attn_causal_d128_kt attn_causal_d128_sdpa attn_gqa8_d128_kt attn_gqa8_d128_sdpa --json /tmp/res/tile_ncu.json > /tmp/res/tile_ncu.log 2>&1); cut -c1-300 /tmp/res/tile_ncu.log | grep -v Warn
cd /tmp/res && tar czf $OUT/runs.tgz *; cd -
(cd benchmarks/experiments && timeout 200 ncu --kernel-name regex:gru_seq_grid_kernel --launch-count 1 --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats python3 rnn_grid_sweep.py --kernels gru_seq --hidden 1024 --batch 16 --only 8,128,4 > /tmp/res/ncu_gru_seq.txt 2>&1); grep -E "Duration|Throughput|Issued Warp|No Eligible|Active Warps|Eligible Warps|Warp Cycles Per Issued" /tmp/res/ncu_gru_seq.txt | head -20
cd /tmp/res && tar czf $OUT/runs.tgz *
