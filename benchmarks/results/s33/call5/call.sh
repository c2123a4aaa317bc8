# One H200: measured tuning with the cost model as this session left it pruning (sm_90), against the same
# tune without pruning, on the matmul and attention recipes, 24 trials a problem (issue 15's pruning target).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
timeout 260 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors --out /tmp/res/art_prune --json /tmp/res/bench_prune.json > /tmp/res/prune.log 2>&1; echo "prune rc $?"; tail -4 /tmp/res/prune.log | cut -c1-200
(cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
timeout 260 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors --no-prune --out /tmp/res/art_noprune --json /tmp/res/bench_noprune.json > /tmp/res/noprune.log 2>&1; echo "noprune rc $?"; tail -4 /tmp/res/noprune.log | cut -c1-200
(cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
