# One H200: why full timings of 8192^3 GEMMs sample to the 2-second cap (issue 16). kt's EventTimer times
# three library configs beside cuBLAS, ranked by the ratio, 3 s each, every pair kept, nvidia-smi logging
# the SM clock and power every 20 ms (benchmarks/experiments/ratio_noise.py); twice.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for i in 1 2; do timeout 100 python3 benchmarks/experiments/ratio_noise.py --json /tmp/res/noise_$i.json --seconds 3 2>&1 | tail -4; done
(cd /tmp/res && tar czf $OUT/runs.tgz *)
