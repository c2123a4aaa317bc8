# One H200: static artifacts tuned on the CPU machine with this session's model (benchmarks/finalize_check.py
# --prepare bench_static/s33 --recipes softmax,matmul,attention --target nvidia:sm_90), finalized here against a
# full measured tune of each recipe (issue 15's finalize criterion), first-call finalization for softmax.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
timeout 370 python3 benchmarks/finalize_check.py --static bench_static/s33 --recipes softmax,matmul,attention --json /tmp/res/bench_finalize_h200_s33.json > /tmp/res/finalize.log 2>&1; echo "finalize rc $?"; grep -v Warn /tmp/res/finalize.log | grep -v warn_once | tail -25 | cut -c1-220
(cd /tmp/res && tar czf $OUT/runs.tgz *)
