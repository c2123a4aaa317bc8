python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/gpu.txt
root=$PWD
(cd benchmarks/experiments && python3 mm_stride.py) 2>&1 | tee $OUT/mm_pitch.txt | cut -c1-200
python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --out /tmp/warm > /dev/null 2>&1; echo warm-up done
run() {  # name mode recipe
  if [ $2 = base ]; then dir=$root/ab_base; pp=$root/ab_base/plugins:$PYTHONPATH; else dir=$root; pp=$PYTHONPATH; fi
  (cd $dir && PYTHONPATH=$pp /usr/bin/time -f "$1 wall %e s" python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > $OUT/$1.log 2>&1)
  tail -1 $OUT/$1.log; grep -E "measured|this run" $OUT/$1.log | cut -c1-110
  find /tmp/o_$1 -name trials.jsonl -exec cp {} $OUT/$1.trials.jsonl \;
}
for i in 1 2; do for m in new base; do run mm_${m}_$i $m matmul; done; done
for m in new base; do run sm_${m}_1 $m softmax; done
cd $OUT && tar czf all.tgz --remove-files *.log *.jsonl
