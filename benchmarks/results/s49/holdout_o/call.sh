# Thirty-ninth session, one H200: `kt devices --calibrate`, then a fifteenth held-out ranking dataset for the cost model (issue 15):
# the library's matmul, attention, softmax, layernorm, rmsnorm and gemv kernels and spaces on problems no stored dataset,
# calibration or recipe has (benchmarks/recipes/holdout_*_o.toml, written after a unit's last round of programs was modelled
# and committed before anything was measured on them), random points, every candidate timed fully; then the in-flight sweep
# (benchmarks/experiments/in_flight_sweep.py) and the README's main job.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
root=$PWD; git log --oneline -1 > /tmp/res/commit.txt 2>/dev/null
timeout 60 python3 -c "from kt_cli.cli import main; main()" --json devices --calibrate > /tmp/res/calibrate.json 2> /tmp/res/calibrate.err; tail -c 200 /tmp/res/calibrate.json; echo
for k in gemv:90 softmax:90 layernorm:90 rmsnorm:90 matmul:150 attention:130; do
  name=holdout_${k%%:*}_o
  timeout ${k##*:} python3 benchmarks/run.py --kernels $name --trials 24 --sampler random --no-race --no-prune --no-anchors --json /tmp/res/bench_rank_$name.json --out /tmp/res/art_$name > /tmp/res/bench_rank_$name.log 2>&1; echo "$name rc $?"; tail -1 /tmp/res/bench_rank_$name.log | cut -c1-200
  cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *; cd $root
done
timeout 100 python3 benchmarks/experiments/in_flight_sweep.py > /tmp/res/in_flight_sweep.jsonl 2> /tmp/res/in_flight_sweep.err; echo "sweep rc $? $(wc -l < /tmp/res/in_flight_sweep.jsonl) points"
cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *; cd $root
( time timeout 120 python3 -c "from kt_cli.cli import main; main()" tune recipes/softmax.toml --out /tmp/res/art_softmax ) > /tmp/res/tune_softmax.log 2>&1; echo "kt tune recipes/softmax.toml rc $?"; tail -4 /tmp/res/tune_softmax.log
cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *; cd $root
