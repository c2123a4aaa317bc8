python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt; nproc
python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers 1,2,1,2 --trials 32 --warm-cache /tmp/tc --json $OUT/scale.jsonl 2>&1 | grep -v "^--workers" | tail -8
