# One H200: pruned trials told to the sampler as PRUNED (HEAD) against the code before that change (the same tree
# with before_pruned_trials.patch applied: a pruned candidate a failed trial), and HEAD without pruning; matmul
# and attention recipes, 24 trials a problem, alternating (issue 15's pruning target, the 1000^3 winners).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
C=benchmarks/results/s35/call1
rm -rf /tmp/res /tmp/old; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
cp -r . /tmp/old && (cd /tmp/old && patch -s -p1 < $C/before_pruned_trials.patch) || exit 4
run() {  # mode i
  case $1 in
    new) dir=.; py=/tmp/site; flag="";;
    old) dir=/tmp/old; py=/tmp/old:/tmp/site; flag="";;
    noprune) dir=.; py=/tmp/site; flag="--no-prune";;
  esac
  (cd $dir && PYTHONPATH=$py timeout 110 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors $flag \
     --out /tmp/res/art_$1_$2 --json /tmp/res/bench_$1_$2.json > /tmp/res/$1_$2.log 2>&1); echo "$1 $2 rc $?"
  grep '"wall_s"' /tmp/res/$1_$2.log | cut -c1-120
  (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
}
run new 0; run old 1; run new 1; run noprune 1; run old 2; run new 2; run noprune 2
