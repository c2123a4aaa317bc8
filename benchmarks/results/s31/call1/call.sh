# A 4x H100 host (asked as nvidia-h100-x4), HEAD of the session's start (622f0a2): where a four-worker run's
# time goes. The matmul recipe at 128 trials a problem, one worker then four, twice, each run cold, with
# every kt process's threads sampled (benchmarks/experiments/stack_sample), the host's CPU (/proc/stat)
# and the GPUs' utilisation (nvidia-smi dmon) recorded each second.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
(while true; do echo "$(date +%s.%N) $(head -1 /proc/stat)"; sleep 0.5; done > /tmp/res/procstat.txt) & PS=$!
nvidia-smi dmon -s u -d 1 > /tmp/res/dmon.txt 2>&1 & DM=$!
for i in 1 2; do for w in 1 4; do
  export KT_STACK_SAMPLE_DIR=/tmp/res/stacks_w${w}_$i
  echo "run w$w #$i start $(date +%s.%N)" >> /tmp/res/marks.txt
  PYTHONPATH=$PWD/benchmarks/experiments/stack_sample:$PYTHONPATH timeout 150 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json /tmp/res/scale.jsonl > /tmp/res/scale_w${w}_$i.log 2>&1; echo "w$w #$i rc $?"; tail -1 /tmp/res/scale_w${w}_$i.log | cut -c1-200
  echo "run w$w #$i end $(date +%s.%N)" >> /tmp/res/marks.txt
  python3 benchmarks/experiments/stack_report.py $KT_STACK_SAMPLE_DIR --top 15 --kt > /tmp/res/stacks_w${w}_$i.txt 2>&1
  grep -E "^pid|CPU charged" /tmp/res/stacks_w${w}_$i.txt | cut -c1-60,150-230
  cd /tmp/res && tar czf $OUT/runs.tgz *; cd - >/dev/null
done; done
kill $PS $DM
cd /tmp/res && tar czf $OUT/runs.tgz *
