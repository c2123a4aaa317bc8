# A 2x H100 host: fair slots with parts (a study is owed its part of the slots while it sets up; a freed slot
# goes to the study furthest behind in its budget) against the base (6f4a092, in _base), the matmul recipe, 1 and 2 workers, each run cold;
# at the recipe's 32 trials a problem (codes alternating twice), then at 128.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
for code in new base new base; do
  root=.; [ $code = base ] && root=_base
  timeout 120 python3 $root/benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2 --trials 32 --json /tmp/res/scale32_$code.jsonl > /tmp/res/scale32_$code.log 2>&1; echo "$code rc $?"; tail -3 /tmp/res/scale32_$code.log
done
for code in new base; do
  root=.; [ $code = base ] && root=_base
  timeout 130 python3 $root/benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2 --trials 128 --json /tmp/res/scale128_$code.jsonl > /tmp/res/scale128_$code.log 2>&1; echo "$code rc $?"; tail -3 /tmp/res/scale128_$code.log
done
cd /tmp/res && tar czf $OUT/runs.tgz *
