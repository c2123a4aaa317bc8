# One H200, the session's code: the resident fork server's tests under the GPU host's Python 3.12 (its
# multiprocessing fork server), then the GPU tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee $OUT/gpu.txt
python3 --version
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_resident.py 2>&1 | tail -4
T=$(date +%s); timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py 2>&1 | tail -3; echo "gpu tests $(( $(date +%s) - T )) s"
