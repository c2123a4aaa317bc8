# One H200: Nsight Compute's L2 counters of the library's attention (Triton kernel, pointer and TMA) over a
# grid of tiles and four shapes, beside SDPA (benchmarks/experiments/l2_sectors.py --kernel attention).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader | tee /tmp/res/gpu.txt
E="benchmarks/experiments/l2_sectors.py"
timeout 240 python3 $E --kernel attention --json /tmp/res/rows.json > /tmp/res/rows.log 2>&1; echo "time rc $?"; grep -c error /tmp/res/rows.log; tail -2 /tmp/res/rows.log
(cd /tmp/res && tar czf $OUT/res.tgz *)
timeout 300 ncu --csv --clock-control none --profile-from-start off --metrics $(python3 $E --metrics) python3 $E --kernel attention --profile > /tmp/res/ncu.csv 2> /tmp/res/ncu.err; echo "ncu rc $?"; tail -3 /tmp/res/ncu.err
python3 $E --join /tmp/res/rows.json /tmp/res/ncu.csv > /tmp/res/joined.json 2> /tmp/res/join.err; echo "join rc $?"; cat /tmp/res/join.err
(cd /tmp/res && tar czf $OUT/res.tgz *)
