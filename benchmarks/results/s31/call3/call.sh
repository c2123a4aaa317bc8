# A 4x GPU host (asked as nvidia-h100-x4), c8a25fc: how long each database transaction of a trial takes with
# one worker and with four (benchmarks/experiments/commit_times), the matmul recipe at 128 trials a problem.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
for w in 1 4; do
  export KT_COMMIT_TIMES_DIR=/tmp/res/commits_w$w
  PYTHONPATH=$PWD/benchmarks/experiments/commit_times:$PYTHONPATH timeout 140 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json /tmp/res/scale.jsonl > /tmp/res/scale_w$w.log 2>&1; echo "w$w rc $? $(tail -1 /tmp/res/scale_w$w.log | cut -c1-120)"
  n=$(tail -1 /tmp/res/scale.jsonl | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['trials'])")
  python3 benchmarks/experiments/commit_report.py $KT_COMMIT_TIMES_DIR $n | tee /tmp/res/commits_w$w.txt
done
cd /tmp/res && tar czf $OUT/runs.tgz *
