# One H200: does the GIL's switch interval hold the device between candidates? The matmul recipe at 128
# trials a problem, one worker, cold, with Python's default interval (5 ms) and with 1 ms
# (benchmarks/experiments/switch_interval), alternating, twice, every request stamped on both sides of its
# pipe (KT_PROFILE_DIR): the device worker's gaps between an answer and the next request.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
SI=$PWD/benchmarks/experiments/switch_interval
for i in 1 2; do for s in 0.005 0.001; do
  export KT_PROFILE_DIR=/tmp/res/pipes_${s}_$i KT_SWITCH_INTERVAL_S=$s
  PYTHONPATH=$SI:$PYTHONPATH timeout 120 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1 --trials 128 --json /tmp/res/scale_$s.jsonl > /tmp/res/scale_${s}_$i.log 2>&1
  echo "switch $s #$i rc $? $(grep -o "'per_min': [0-9.]*" /tmp/res/scale_${s}_$i.log) $(grep -o "'middle_per_min': [0-9.]*" /tmp/res/scale_${s}_$i.log) $(grep -o "device busy [0-9]*%" /tmp/res/scale_${s}_$i.log)"
  (cd /tmp/res && tar czf $OUT/runs.tgz *)
done; done
