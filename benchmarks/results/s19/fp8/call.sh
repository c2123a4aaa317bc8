python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt
python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider -k fp8 -x 2>&1 | tail -4
python3 benchmarks/gluon_gemm.py --dtype float8_e4m3 --sizes 4096 8192 --json $OUT/fp8.json > $OUT/fp8.log 2>&1; tail -4 $OUT/fp8.log
python3 benchmarks/gluon_gemm.py --dtype bfloat16 --sizes 4096 8192 --json $OUT/bf16.json > $OUT/bf16.log 2>&1; tail -4 $OUT/bf16.log
/usr/bin/time -f "tune wall %e s" python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul_fp8.toml --out /tmp/o8 > $OUT/tune_fp8.log 2>&1; tail -25 $OUT/tune_fp8.log | cut -c1-220
find /tmp/o8 -name trials.jsonl -exec cp {} $OUT/tune_fp8.trials.jsonl \;
