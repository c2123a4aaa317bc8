# one H100: 13b7452 (the working tree: the judge's comparison kernels load in the background, and a full
# timing's baseline rides along only until tight or 80 samples) against f67cd0d (ab_base), cold `kt tune` walls
# (a fresh Triton cache and an empty kt cache each run), alternating; then the new GPU test and the
# measured-mode ones
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
root=$PWD
run() {  # name code recipe [stamps]
  rm -rf /tmp/ktc /tmp/tc /tmp/p_$1; dir=$root/ab_$2; [ $2 = new ] && dir=$root
  extra=""; [ -n "$4" ] && { mkdir -p /tmp/p_$1; extra="KT_PROFILE_DIR=/tmp/p_$1"; }
  T0=$(date +%s.%N)
  (cd $dir && env $extra KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc PYTHONPATH=$dir:$dir/plugins:$PYTHONPATH /usr/bin/time -f "$1 wall %e s" timeout 90 python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > /tmp/res/$1.log 2>&1)
  tail -1 /tmp/res/$1.log; grep -E "this run" /tmp/res/$1.log | cut -c1-170
  find /tmp/o_$1 -name trials.jsonl -exec cp {} /tmp/res/$1.trials.jsonl \;
  [ -n "$4" ] && python3 $root/benchmarks/experiments/startup_timeline.py /tmp/p_$1 --t0 $T0 --until 14 > /tmp/res/$1.startup.txt 2>&1 && head -12 /tmp/res/$1.startup.txt
}
for i in 1 2 3; do for m in new base; do run mm_${m}_$i $m matmul; done; done
for m in new base; do run sm_${m}_1 $m softmax; done
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider -k "judge or timing_record or raced_out or illegal" > /tmp/res/test_gpu.log 2>&1; tail -3 /tmp/res/test_gpu.log
cd /tmp/res && tar czf $OUT/all.tgz *
