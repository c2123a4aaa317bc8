# A multi-GPU host: the matmul recipe at 128 trials a problem, one worker and N (every GPU), the code with
# versioned reads (a look reads again only the running trials that changed) against the code before it
# (HEAD~1, unpacked as _base/), alternating, twice; every kt process's CPU time recorded at exit
# (stack_sample with a 1 s period).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_STACK_SAMPLE_PERIOD_S=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
N=$(nvidia-smi -L | wc -l); SS=$PWD/benchmarks/experiments/stack_sample
for i in 1 2; do for w in 1 $N; do for code in new base; do
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  export KT_STACK_SAMPLE_DIR=/tmp/res/cpu_${code}_w${w}_$i
  (cd $dir && PYTHONPATH=$SS:$PYTHONPATH timeout 140 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json /tmp/res/scale_$code.jsonl > /tmp/res/scale_${code}_w${w}_$i.log 2>&1); echo "$code w$w #$i rc $? $(grep -o "'per_min': [0-9.]*" /tmp/res/scale_${code}_w${w}_$i.log) $(grep -o "'middle_per_min': [0-9.]*" /tmp/res/scale_${code}_w${w}_$i.log)"
done; done; (cd /tmp/res && tar czf $OUT/runs.tgz *); done
