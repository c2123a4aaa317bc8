#!/bin/bash
# Thirty-second session: the row kernels' DRAM-bound ties (benchmarks/experiments/row_ties.py), timed and read by ncu.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader > $OUT/gpu.txt
python3 benchmarks/experiments/row_ties.py --json $OUT/times.json > $OUT/times.log 2>&1; echo "times rc=$?"
timeout 330 ncu --csv --page raw --profile-from-start off --section SpeedOfLight --section Occupancy --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section LaunchStats --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors.sum,smsp__inst_executed.sum \
  python3 benchmarks/experiments/row_ties.py --profile > $OUT/ncu.csv 2> $OUT/ncu.err; echo "ncu rc=$?"
tail -3 $OUT/ncu.err; wc -c $OUT/ncu.csv
