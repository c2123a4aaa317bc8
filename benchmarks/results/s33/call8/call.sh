# One H200: how long must the board be held at load before a long kernel's full timing settles? ratio_noise.py
# with 0.25, 0.5 and 1.0 s of cuBLAS back to back before each config's timing, two fresh processes each.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for h in 0.25 0.5 1.0; do for i in 1 2; do echo "preheat $h s #$i"; timeout 60 python3 benchmarks/experiments/ratio_noise.py --json /tmp/res/hot_${h}_$i.json --seconds 3 --preheat $h 2>&1 | tail -3; done; done
(cd /tmp/res && tar czf $OUT/runs.tgz *)
