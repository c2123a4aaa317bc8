# one H100: the GPU tests on HEAD, then kt tune walls cold (a fresh Triton cache and an empty kt cache
# each run), 319e433 (ab_base: the verification shapes after the screen, racing once a best exists)
# against HEAD (ab_new: every candidate screened, slower screens wait for a faster one's full timing),
# alternating
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt; nproc
mkdir -p /tmp/res; cp $OUT/gpu.txt /tmp/res/
root=$PWD
run() {  # name code recipe
  rm -rf /tmp/ktc /tmp/tc; dir=$root/ab_$2
  (cd $dir && KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc PYTHONPATH=$dir:$dir/plugins:$PYTHONPATH /usr/bin/time -f "$1 wall %e s" timeout 120 python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > /tmp/res/$1.log 2>&1)
  tail -1 /tmp/res/$1.log; grep -E "this run" /tmp/res/$1.log | cut -c1-150
  find /tmp/o_$1 -name trials.jsonl -exec cp {} /tmp/res/$1.trials.jsonl \;
}
for i in 1 2 3; do for m in new base; do run mm_${m}_$i $m matmul; done; done
for m in new base; do run sm_${m}_1 $m softmax; done
timeout 330 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider > /tmp/res/test_gpu.log 2>&1; tail -3 /tmp/res/test_gpu.log
cd /tmp/res && tar czf $OUT/all.tgz *
