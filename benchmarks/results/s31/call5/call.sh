# One GPU: `kt tune` wall time of the final code against the session's base 622f0a2 (unpacked as ab_base/),
# alternating, every run cold (a kt cache and a Triton cache of its own): the matmul recipe twice, softmax once.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee $OUT/gpu.txt; nproc | tee -a $OUT/gpu.txt
COLD=1 MODES="new base" timeout 250 bash benchmarks/experiments/ab_tune.sh recipes/matmul.toml 2
COLD=1 MODES="new base" timeout 100 bash benchmarks/experiments/ab_tune.sh recipes/softmax.toml 1
