# One H200: the preheat (KT_TIMING_PREHEAT_S=0.25) against the cold protocol in `kt tune recipes/matmul.toml`
# and recipes/softmax.toml, alternating on one GPU after an untimed run that fills the caches; then the softmax
# static artifact of benchmarks/results/s33 finalized with the fixed peaks (benchmarks/finalize_check.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
S=benchmarks/results/s34/call1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
run() {  # recipe mode i
  local pre=0; [ $2 = hot ] && pre=0.25
  /usr/bin/time -f "$1 $2 $3 wall %e s" env KT_TIMING_PREHEAT_S=$pre timeout 150 python3 -c "from kt_cli.cli import main; main()" tune recipes/$1.toml --out /tmp/art_$1_$2_$3 > /tmp/res/$1_$2_$3.log 2>&1
  tail -1 /tmp/res/$1_$2_$3.log | tee -a /tmp/res/walls.txt
  find /tmp/art_$1_$2_$3 -name trials.jsonl -exec cp {} /tmp/res/$1_$2_$3.trials.jsonl \;
  python3 $S/summarize.py /tmp/res/$1_$2_$3.trials.jsonl | tee -a /tmp/res/summary.txt
  (cd /tmp/res && tar czf $OUT/runs.tgz *)
}
run matmul cold 0
for i in 1 2; do
  if [ $i = 1 ]; then order="hot cold"; else order="cold hot"; fi
  for m in $order; do run matmul $m $i; done
done
for m in cold hot; do run softmax $m 1; done
timeout 150 python3 benchmarks/finalize_check.py --static bench_static/s33 --recipes softmax --json /tmp/res/bench_finalize_softmax_h200_s34.json > /tmp/res/finalize.log 2>&1; echo "finalize rc $?"; grep -v Warn /tmp/res/finalize.log | grep -v warn_once | tail -12 | cut -c1-220
(cd /tmp/res && tar czf $OUT/runs.tgz *)
