# One H200: the finalize check of softmax again, with finalize holding times against the present device's
# peaks (the previous call judged softmax's fastest configs wrong against an H100's bandwidth).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
timeout 150 python3 benchmarks/finalize_check.py --static bench_static/s33 --recipes softmax --json /tmp/res/bench_finalize_h200_s33_softmax.json > /tmp/res/finalize.log 2>&1; echo "finalize rc $?"; grep -v Warn /tmp/res/finalize.log | grep -v warn_once | tail -8 | cut -c1-220
(cd /tmp/res && tar czf $OUT/runs.tgz *)
