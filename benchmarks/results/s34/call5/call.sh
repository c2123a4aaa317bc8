# One H200: measured tuning with the session's final cost model pruning (sm_90) against the same tune without
# pruning, matmul and attention recipes, 24 trials a problem, alternating twice (issue 15's pruning target).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
for i in 1 2; do
  for mode in prune noprune; do
    flag=""; [ $mode = noprune ] && flag="--no-prune"
    timeout 130 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors $flag --out /tmp/res/art_${mode}_$i --json /tmp/res/bench_${mode}_$i.json > /tmp/res/${mode}_$i.log 2>&1; echo "$mode $i rc $?"; grep '"wall_s"' /tmp/res/${mode}_$i.log | cut -c1-160
    (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
  done
done
