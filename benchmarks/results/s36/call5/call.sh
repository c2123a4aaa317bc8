# One H200, the session's final code: the matmul recipe at its own budget (32 trials a problem) with Triton's
# autotune timed after it in the same run (tutorial list, 8 configs), twice: when kt first measured a config as
# fast as autotune's best, against autotune's own tuning wall (issue 16).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for i in 1 2; do
  timeout 200 python3 benchmarks/run.py --kernels matmul --trials 32 --autotune --out /tmp/res/art_$i --json /tmp/res/bench_autotune_$i.json > /tmp/res/autotune_$i.log 2>&1; echo "run $i rc $?"
  python3 benchmarks/report.py /tmp/res/bench_autotune_$i.json 2>/dev/null | grep -i "autotune (" | cut -c1-330
  (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' *)
done
