# one H100: the start of a cold matmul tune at HEAD, worker by worker (KT_PROFILE_DIR,
# startup_timeline.py); cold kt tune walls, HEAD (ab_head: a problem's first candidates timed fully
# again) against a9f321d (ab_new), alternating; then the GPU tests on HEAD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc
root=$PWD
rm -rf /tmp/ktc /tmp/tc /tmp/pipes; T0=$(date +%s.%N)
(cd ab_head && KT_PROFILE_DIR=/tmp/pipes KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc PYTHONPATH=$root/ab_head:$root/ab_head/plugins:$PYTHONPATH timeout 90 python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/matmul.toml --out /tmp/o_prof > /tmp/res/prof.log 2>&1)
tail -1 /tmp/res/prof.log; python3 ab_head/benchmarks/experiments/startup_timeline.py /tmp/pipes --t0 $T0 --until 20 > /tmp/res/startup.txt 2>&1; head -60 /tmp/res/startup.txt
run() {  # name code recipe
  rm -rf /tmp/ktc /tmp/tc; dir=$root/ab_$2
  (cd $dir && KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc PYTHONPATH=$dir:$dir/plugins:$PYTHONPATH /usr/bin/time -f "$1 wall %e s" timeout 90 python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > /tmp/res/$1.log 2>&1)
  tail -1 /tmp/res/$1.log; grep -E "this run" /tmp/res/$1.log | cut -c1-170
  find /tmp/o_$1 -name trials.jsonl -exec cp {} /tmp/res/$1.trials.jsonl \;
}
for i in 1 2; do for m in head new; do run mm_${m}_$i $m matmul; done; done
for m in head new; do run sm_${m}_1 $m softmax; done
(cd ab_head && timeout 240 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider > /tmp/res/test_gpu.log 2>&1); tail -3 /tmp/res/test_gpu.log
cd /tmp/res && tar czf $OUT/all.tgz *
