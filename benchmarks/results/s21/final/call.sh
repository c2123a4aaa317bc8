# one H100: the final code (HEAD at the call): the GPU tests, then kt tune on the README's main job and
# the matmul recipe, cold (a fresh Triton cache and kt cache)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt
timeout 330 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider > /tmp/res/test_gpu.log 2>&1; tail -1 /tmp/res/test_gpu.log
for r in softmax matmul; do
  rm -rf /tmp/ktc /tmp/tc
  KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc /usr/bin/time -f "$r wall %e s" timeout 120 kt tune recipes/$r.toml --out /tmp/o_$r > /tmp/res/$r.log 2>&1
  tail -1 /tmp/res/$r.log; grep -E "this run" /tmp/res/$r.log | cut -c1-160
done
cd /tmp/res && tar czf $OUT/all.tgz *
