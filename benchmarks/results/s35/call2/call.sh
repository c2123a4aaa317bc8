# One H200: the compiled candidates waiting for the device take it most promising first (HEAD, e199998) against
# arrival order (--arrival-order), both pruning; and without pruning; matmul and attention recipes, 24 trials a
# problem, alternating (issue 15's pruning target; issue 16's time to the best).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
run() {  # mode i
  case $1 in
    bestfirst) flag="";;
    arrival) flag="--arrival-order";;
    noprune) flag="--no-prune";;
  esac
  timeout 110 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors $flag \
     --out /tmp/res/art_$1_$2 --json /tmp/res/bench_$1_$2.json > /tmp/res/$1_$2.log 2>&1; echo "$1 $2 rc $?"
  grep '"wall_s"' /tmp/res/$1_$2.log | cut -c1-120
  for f in $(find /tmp/res/art_$1_$2 -name trials.jsonl); do cp $f /tmp/res/$1_$2.$(basename $(dirname $f)).trials.jsonl; done
  (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
}
run bestfirst 0; run arrival 1; run bestfirst 1; run noprune 1; run arrival 2; run bestfirst 2; run noprune 2
