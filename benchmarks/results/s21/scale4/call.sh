# 4x H100: kt tune --workers 1, 2 and 4 on the matmul recipe, cold (each run its own Triton cache, kt's
# cache emptied), HEAD (ab_new), twice each; the host's CPU sampled from /proc/stat every second
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt; nproc
root=$PWD; mkdir -p /tmp/res
for w in 1 4 2 1 4 2; do
  rm -rf /tmp/ktcache
  (while :; do echo "$(date +%s.%N) $(head -1 /proc/stat)"; sleep 1; done) > /tmp/res/cpu_w${w}_$RANDOM.txt & sampler=$!
  (cd $root/ab_new && timeout 170 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 32 --json /tmp/res/scale.jsonl 2>&1 | grep -v "^--workers" | tail -1)
  kill $sampler
done
cp $OUT/gpu.txt /tmp/res/; cd /tmp/res && tar czf $OUT/all.tgz *
