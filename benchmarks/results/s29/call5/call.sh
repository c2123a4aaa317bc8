# A 2x H100 host: 56281a4 (a repaired sampler marks every point the study holds, other processes'
# included; reads shared; a trial's writes in fewer transactions) against the session's base (7efe2c6,
# in _base), the matmul recipe at 128 trials a problem, 1 and 2 workers, alternating codes; each run cold.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
for code in new base new; do
  root=.; [ $code = base ] && root=_base
  timeout 150 python3 $root/benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2 --trials 128 --json /tmp/res/scale128_$code.jsonl > /tmp/res/scale128_$code.log 2>&1; echo "$code rc $?"; tail -3 /tmp/res/scale128_$code.log
done
cd /tmp/res && tar czf $OUT/runs.tgz *
