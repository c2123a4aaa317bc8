# 2x H100: kt tune --workers 1 and 2 on the matmul recipe, cold (each run its own Triton cache, kt's cache
# emptied), the session's start (ab_base) against the verification shapes compiled only for candidates
# that survive their screen (ab_new), alternating; the host's CPU sampled from /proc/stat every second
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt; nproc; lscpu | grep -E "^Thread|^Core|^Socket|^Model name"
root=$PWD
for w in 1 2 1 2; do for code in new base; do
  rm -rf /tmp/ktcache
  (while :; do echo "$(date +%s.%N) $(head -1 /proc/stat)"; sleep 1; done) > $OUT/cpu_${code}_w${w}_$RANDOM.txt & sampler=$!
  (cd $root/ab_$code && timeout 170 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 32 --json $OUT/scale_$code.jsonl 2>&1 | grep -v "^--workers" | tail -1 | sed "s/^/$code: /")
  kill $sampler
done; done
