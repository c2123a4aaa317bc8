# Thirty-third session, one H200: `kt devices --calibrate`, then a fourteenth held-out ranking dataset for the cost model (issue 15):
# the library's matmul, attention, softmax, layernorm, rmsnorm and gemv kernels and spaces on problems no stored dataset,
# calibration or recipe has (benchmarks/recipes/holdout_*_n.toml, written in the thirty-third session after the pruning rule that learns the model's error was chosen;
# and before anything was measured on them), random points, every candidate timed fully.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
root=$PWD
timeout 60 python3 -c "from kt_cli.cli import main; main()" --json devices --calibrate > /tmp/res/calibrate.json 2> /tmp/res/calibrate.err; tail -c 200 /tmp/res/calibrate.json; echo
for k in matmul:150 attention:130 softmax:90 layernorm:110 rmsnorm:90 gemv:90; do
  name=holdout_${k%%:*}_n
  timeout ${k##*:} python3 benchmarks/run.py --kernels $name --trials 24 --sampler random --no-race --no-prune --no-anchors --json /tmp/res/bench_rank_$name.json --out /tmp/res/art_$name > /tmp/res/bench_rank_$name.log 2>&1; echo "$name rc $?"; tail -2 /tmp/res/bench_rank_$name.log | cut -c1-200
  cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *; cd $root
done
# the README's main job on a GPU, at this code (pruning with the learned error)
( time timeout 120 python3 -c "from kt_cli.cli import main; main()" tune recipes/softmax.toml --out /tmp/res/art_softmax ) > /tmp/res/tune_softmax.log 2>&1; echo "kt tune recipes/softmax.toml rc $?"; tail -4 /tmp/res/tune_softmax.log
cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *; cd $root
