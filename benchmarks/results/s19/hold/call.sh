python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for r in matmul_fp8 matmul matmul_fp8; do
  /usr/bin/time -f "$r wall %e s" python3 -c "from kt_cli.cli import main; main()" tune recipes/$r.toml --out /tmp/o_$r > $OUT/$r.log 2>&1
  grep -E "measured|this run|wall" $OUT/$r.log | cut -c1-190
  find /tmp/o_$r -name trials.jsonl -exec cp {} $OUT/$r.trials.jsonl \; ; rm -rf /tmp/o_$r
done
python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider > $OUT/test_gpu.log 2>&1; tail -3 $OUT/test_gpu.log
cd $OUT && tar czf tune.tgz --remove-files *.log *.jsonl
