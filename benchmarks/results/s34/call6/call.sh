# One H200: the session's final code on the README's main job and the matmul recipe (`kt tune`, process start
# to exit), matmul twice after an untimed run that fills the caches.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
S=benchmarks/results/s34/call1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
run() {  # recipe i
  /usr/bin/time -f "$1 $2 wall %e s" timeout 150 python3 -c "from kt_cli.cli import main; main()" tune recipes/$1.toml --out /tmp/art_$1_$2 > /tmp/res/$1_$2.log 2>&1
  tail -1 /tmp/res/$1_$2.log | tee -a /tmp/res/walls.txt; grep -E "pruned|timed fully|raced" /tmp/res/$1_$2.log | tail -2 | cut -c1-200
  find /tmp/art_$1_$2 -name trials.jsonl -exec cp {} /tmp/res/$1_$2.trials.jsonl \;
  python3 $S/summarize.py /tmp/res/$1_$2.trials.jsonl | tee -a /tmp/res/summary.txt
  (cd /tmp/res && tar czf $OUT/runs.tgz *)
}
run matmul 0; run matmul 1; run matmul 2; run softmax 1
