# One H100: the L2 read rate of plain loads with more bytes in flight and of TMA tile reads, beside the
# calibration's streaming read (issue 15: benchmarks/experiments/l2_rate.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
timeout 200 python3 benchmarks/experiments/l2_rate.py --json /tmp/res/l2_rate_share.json > /tmp/res/l2_rate_share.log 2>&1; echo "rc $?"; grep best /tmp/res/l2_rate_share.log; grep error /tmp/res/l2_rate_share.log | cut -c1-300
cd /tmp/res && tar czf $OUT/runs.tgz *
