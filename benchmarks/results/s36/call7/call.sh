# One H200: Nsight Compute on softmax 3072x20480 bf16, the seventh held-out run's miss (the cost model's favourite
# against the best and two other configs): DRAM/L2 throughput, L2 hit rate, occupancy, warp stalls, for the next
# session's model of a row's second pass.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
for c in best_4096_w4 fav_32768_w16 b8192_w16 b16384_w8; do
  timeout 120 ncu --kernel-name softmax_kernel --launch-skip 1 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats --csv --page details python3 benchmarks/experiments/second_pass.py $c > /tmp/res/ncu_$c.csv 2> /tmp/res/ncu_$c.err; echo "$c rc $?"
  grep -E '"Duration"|"DRAM Throughput"|"L2 Hit Rate"|"Achieved Occupancy"|"L1/TEX Hit Rate"|"Memory Throughput"|Stall Long Scoreboard|"Warp Cycles Per Issued Instruction"' /tmp/res/ncu_$c.csv | awk -F'","' '{print $(NF-2)": "$NF}' | head -12
  (cd /tmp/res && tar czf $OUT/runs.tgz *)
done
