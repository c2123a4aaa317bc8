# 2x H200: does the GIL's switch interval set the cap a kt process meets when a partner shares its studies
# (about 15 trials/s against 24 alone, twenty-second session)? The matmul recipe at 128 trials a problem,
# cold, one worker and two, with Python's default interval (5 ms) and 1 ms (benchmarks/experiments/
# switch_interval: a sitecustomize every kt process loads), alternating, twice.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
SI=$PWD/benchmarks/experiments/switch_interval
run() {  # workers interval round
  KT_SWITCH_INTERVAL_S=$2 PYTHONPATH=$SI:$PYTHONPATH timeout 110 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $1 --trials 128 --json /tmp/res/scale_$2.jsonl > /tmp/res/scale_w$1_$2_$3.log 2>&1
  echo "workers $1 switch $2 #$3 rc $? $(grep -o "'per_min': [0-9.]*" /tmp/res/scale_w$1_$2_$3.log | tail -1) $(grep -o "'middle_per_min': [0-9.]*" /tmp/res/scale_w$1_$2_$3.log | tail -1)"
  (cd /tmp/res && tar czf $OUT/runs.tgz *)
}
for i in 1 2; do run 1 0.005 $i; run 2 0.005 $i; run 2 0.001 $i; run 1 0.001 $i; done
