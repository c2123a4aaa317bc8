# One H200: the GPU tests at the final code (the device's turns changed: kt_cli/evaluate/device_turns.py), then
# one more pair, most promising first against arrival order (matmul and attention, 24 trials a problem), then
# the README's main job and the matmul recipe through `kt tune` (process start to exit).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
timeout 340 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider --durations 8 > /tmp/res/test_gpu.log 2>&1; echo "pytest rc $?"; tail -12 /tmp/res/test_gpu.log | cut -c1-250
(cd /tmp/res && tar czf $OUT/runs.tgz *)
export CUDA_VISIBLE_DEVICES=0
for m in arrival bestfirst; do
  flag=""; [ $m = arrival ] && flag="--arrival-order"
  timeout 100 python3 benchmarks/run.py --kernels matmul,attention --trials 24 --no-anchors $flag --out /tmp/res/art_$m --json /tmp/res/bench_${m}_3.json > /tmp/res/${m}_3.log 2>&1; echo "$m rc $?"; grep '"wall_s"' /tmp/res/${m}_3.log | cut -c1-120
  (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
done
for r in softmax matmul; do
  /usr/bin/time -f "$r wall %e s" timeout 100 python3 -c "from kt_cli.cli import main; main()" tune recipes/$r.toml --out /tmp/art_$r > /tmp/res/tune_$r.log 2>&1; tail -1 /tmp/res/tune_$r.log
  grep -E "pruned|timed fully|raced" /tmp/res/tune_$r.log | tail -2 | cut -c1-220
  (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
done
