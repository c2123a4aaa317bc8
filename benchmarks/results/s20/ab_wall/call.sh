# one H100: kt tune walls, the session's start (ab_base = ed24af1) against HEAD (ab_new), alternating,
# after one warm-up run of each (a shared Triton cache; HEAD keeps binary features in kt's cache)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt
root=$PWD
run() {  # name code recipe
  dir=$root/ab_$2
  (cd $dir && PYTHONPATH=$dir:$dir/plugins:$PYTHONPATH /usr/bin/time -f "$1 wall %e s" python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > $OUT/$1.log 2>&1)
  tail -1 $OUT/$1.log; grep -E "measured|this run" $OUT/$1.log | cut -c1-120
  find /tmp/o_$1 -name trials.jsonl -exec cp {} $OUT/$1.trials.jsonl \;
}
run warm_new new matmul > /dev/null; run warm_base base matmul > /dev/null; echo warm-up done
for i in 1 2; do for m in new base; do run mm_${m}_$i $m matmul; done; done
for m in new base; do run sm_${m}_1 $m softmax; done
cd $OUT && rm -f warm_* && tar czf all.tgz --remove-files *.log *.jsonl
