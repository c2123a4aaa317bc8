# One H200: Nsight Compute's L2 and DRAM counters of the library's matmul over a grid of tiles and shapes,
# the calibration's own L2 read and cuBLAS (benchmarks/experiments/l2_sectors.py), each timed first; then
# `kt devices --calibrate` on this H200.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee /tmp/res/gpu.txt
E=benchmarks/experiments/l2_sectors.py
timeout 240 python3 $E --json /tmp/res/rows.json > /tmp/res/rows.log 2>&1; echo "time rc $?"; tail -2 /tmp/res/rows.log
(cd /tmp/res && tar czf $OUT/res.tgz *)
timeout 240 ncu --csv --clock-control none --profile-from-start off --metrics $(python3 $E --metrics) python3 $E --profile > /tmp/res/ncu.csv 2> /tmp/res/ncu.err; rc=$?; echo "ncu rc $rc"; tail -3 /tmp/res/ncu.err
[ $rc = 0 ] || { timeout 200 ncu --csv --clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed python3 $E --profile > /tmp/res/ncu.csv 2> /tmp/res/ncu2.err; echo "ncu2 rc $?"; tail -3 /tmp/res/ncu2.err; }
python3 $E --join /tmp/res/rows.json /tmp/res/ncu.csv > /tmp/res/joined.json 2> /tmp/res/join.err; echo "join rc $?"; cat /tmp/res/join.err
(cd /tmp/res && tar czf $OUT/res.tgz *)
timeout 90 kt --json devices --calibrate > /tmp/res/calibrate_h200.json 2> /tmp/res/calibrate.err; echo "cal rc $?"; tail -2 /tmp/res/calibrate.err
(cd /tmp/res && tar czf $OUT/res.tgz *)
