# one H100: a compile worker's first compile (benchmarks/first_compile.py), then kt tune walls cold (a
# fresh Triton cache and an empty kt cache each run), 319e433 (ab_base: the tenth session's end) against
# HEAD (ab_new: the eleventh's racing from the first candidates and the twelfth's readied compile
# workers), alternating; then the GPU tests on HEAD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
root=$PWD
(cd ab_new && TRITON_CACHE_DIR=/tmp/tc_fc KT_CACHE_DIR=/tmp/ktc_fc timeout 100 python3 benchmarks/first_compile.py --rounds 4 --json /tmp/res/first_compile.json 2>&1 | tail -6)
run() {  # name code recipe
  rm -rf /tmp/ktc /tmp/tc; dir=$root/ab_$2
  (cd $dir && KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc PYTHONPATH=$dir:$dir/plugins:$PYTHONPATH /usr/bin/time -f "$1 wall %e s" timeout 90 python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > /tmp/res/$1.log 2>&1)
  tail -1 /tmp/res/$1.log; grep -E "this run" /tmp/res/$1.log | cut -c1-170
  find /tmp/o_$1 -name trials.jsonl -exec cp {} /tmp/res/$1.trials.jsonl \;
}
for i in 1 2; do for m in new base; do run mm_${m}_$i $m matmul; done; done
for m in new base; do run sm_${m}_1 $m softmax; done
timeout 240 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider > /tmp/res/test_gpu.log 2>&1; tail -3 /tmp/res/test_gpu.log
cd /tmp/res && tar czf $OUT/all.tgz *
