python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,uuid --format=csv > $OUT/gpu.txt
root=$PWD
python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --out /tmp/warm > /dev/null 2>&1; echo warm-up done
run() {  # name mode recipe
  if [ $2 = base ]; then dir=$root/ab_base; pp=$root/ab_base/plugins:$PYTHONPATH; else dir=$root; pp=$PYTHONPATH; fi
  mkdir -p /tmp/p_$1
  T0=$(date +%s.%N)
  (cd $dir && KT_PROFILE_DIR=/tmp/p_$1 PYTHONPATH=$pp /usr/bin/time -f "$1 wall %e s" python3 -c "from kt_cli.cli import main; main()" tune $root/recipes/$3.toml --out /tmp/o_$1 > $OUT/$1.log 2>&1)
  tail -1 $OUT/$1.log; grep "this run" $OUT/$1.log | cut -c1-150
  python3 benchmarks/experiments/startup_timeline.py /tmp/p_$1 --t0 $T0 --until 100 --requests 4 > $OUT/$1.timeline
  head -20 $OUT/$1.timeline | grep -v "^  compile" | cut -c1-400
  find /tmp/o_$1 -name trials.jsonl -exec cp {} $OUT/$1.trials.jsonl \;
  tar czf $OUT/$1.pipes.tgz -C /tmp/p_$1 .
}
for i in 1 2 3; do for m in new base; do run mm_${m}_$i $m matmul; done; done
for i in 1 2; do for m in new base; do run sm_${m}_$i $m softmax; done; done
cd $OUT && tar czf all.tgz --remove-files *.log *.timeline *.jsonl *.pipes.tgz
