# One H200: three more pairs, most promising first (HEAD) against arrival order (--arrival-order), pruning on,
# matmul and attention recipes, 24 trials a problem, alternating (calls 2-3 had two pairs: within the spread).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for i in 4 5 6; do
  for m in bestfirst arrival; do
    flag=""; [ $m = arrival ] && flag="--arrival-order"
    timeout 90 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors $flag --out /tmp/res/art_${m}_$i --json /tmp/res/bench_${m}_$i.json > /tmp/res/${m}_$i.log 2>&1; echo "$m $i rc $?"; grep '"wall_s"' /tmp/res/${m}_$i.log | cut -c1-120
    (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
  done
done
