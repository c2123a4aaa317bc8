# One H100: the new GPU test of the Gluon attention, and the kept-baseline test again.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/res8; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res8/gpu.txt
timeout 300 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider -k "gluon_attention or kept_baseline" > /tmp/res8/test_gpu.log 2>&1; tail -30 /tmp/res8/test_gpu.log | grep -v "^\s*$" | tail -12
cd /tmp/res8 && tar czf $OUT/runs.tgz *
