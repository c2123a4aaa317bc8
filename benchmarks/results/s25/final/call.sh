# one H100: the GPU tests (tests/test_gpu.py, marker gpu) on the session's final code
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt; git log --oneline -1 | tee /tmp/res/code.txt
timeout 300 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider > /tmp/res/test_gpu.log 2>&1; tail -4 /tmp/res/test_gpu.log
cd /tmp/res && tar czf $OUT/all.tgz *
