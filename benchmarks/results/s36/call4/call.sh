# One H200, the session's final model (1713b60): measured tuning with pruning (the model prunes candidates it
# estimates 1.5x slower than the problem's fastest), matmul and attention at 24 trials a problem, twice, and
# once without pruning; then the README's main job through `kt tune` (process start to exit).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for m in prune_1 noprune_1 prune_2; do
  flag=""; case $m in noprune*) flag="--no-prune";; esac
  timeout 110 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors $flag --out /tmp/res/art_$m --json /tmp/res/bench_$m.json > /tmp/res/$m.log 2>&1; echo "$m rc $?"; grep '"wall_s"' /tmp/res/$m.log | cut -c1-120
  (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
done
/usr/bin/time -f "softmax wall %e s" timeout 100 python3 -c "from kt_cli.cli import main; main()" tune recipes/softmax.toml --out /tmp/art_softmax > /tmp/res/tune_softmax.log 2>&1; tail -1 /tmp/res/tune_softmax.log
(cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
