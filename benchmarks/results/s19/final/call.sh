python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt
python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --out /tmp/warm > /dev/null 2>&1; echo warm-up done
for r in matmul matmul softmax; do
  /usr/bin/time -f "$r wall %e s" python3 -c "from kt_cli.cli import main; main()" tune recipes/$r.toml --out /tmp/o > $OUT/$r.log 2>&1
  tail -1 $OUT/$r.log; grep -E "measured|this run" $OUT/$r.log | cut -c1-120
  find /tmp/o -name trials.jsonl -exec cp {} $OUT/$r.$(date +%s).trials.jsonl \; ; rm -rf /tmp/o
done
python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider > $OUT/test_gpu.log 2>&1; tail -2 $OUT/test_gpu.log
cd $OUT && tar czf all.tgz --remove-files *.log *.jsonl
