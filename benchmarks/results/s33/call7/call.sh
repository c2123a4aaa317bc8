# One H200: does a full timing settle once the board is at its power cap? ratio_noise.py with 1.5 s of
# cuBLAS back to back before each config's timing, twice, then once without (issue 16).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for i in 1 2; do echo "preheat 1.5 s #$i"; timeout 100 python3 benchmarks/experiments/ratio_noise.py --json /tmp/res/hot_$i.json --seconds 3 --preheat 1.5 2>&1 | tail -3; done
echo "no preheat"; timeout 100 python3 benchmarks/experiments/ratio_noise.py --json /tmp/res/cold.json --seconds 3 2>&1 | tail -3
(cd /tmp/res && tar czf $OUT/runs.tgz *)
