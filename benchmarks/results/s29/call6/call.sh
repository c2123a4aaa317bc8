# One H100, HEAD 56281a4 (the session's storage and sampler changes): the GPU tests but the four long
# recurrence tests (unchanged kernels, 20 passed at 7efe2c6), and the README's main job, timed.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
rm -rf /tmp/tune; mkdir -p /tmp/tune; TRITON_CACHE_DIR=/tmp/tune/tc /usr/bin/time -f "wall %e s" python3 -c "from kt_cli.cli import main; main()" tune recipes/softmax.toml --out /tmp/tune > /tmp/res/softmax.log 2>&1; echo "softmax rc $?"; tail -4 /tmp/res/softmax.log | cut -c1-250
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu.py -k "not recurrences" -p no:cacheprovider --durations 5 > /tmp/res/test_gpu.log 2>&1; tail -9 /tmp/res/test_gpu.log | cut -c1-220
cd /tmp/res && tar czf $OUT/runs.tgz *
