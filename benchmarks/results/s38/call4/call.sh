# One H200, the session's final code (the devices readied from the module's inspection on, beside the spaces'
# checks, so that a new study's first seed evaluated ahead waits for nothing else): `kt serve` with spares
# against no keeper, alternating, for the matmul and softmax recipes from the command line; Triton's autotune
# from a fresh process in the same run; then the whole GPU test file (tests/test_gpu.py), time-boxed.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0 KT_RESIDENT_DIR=/tmp/ktres
KT() { python3 -c "from kt_cli.cli import main; main()" "$@"; }
settled() { for i in $(seq 60); do KT --json serve --status | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if d['spares_readying'] == 0 and d['leases'] == 0 else 1)" && return; sleep 0.5; done; }
rm -rf /tmp/res /tmp/ktres; mkdir -p /tmp/res; mkdir -m 700 /tmp/ktres
nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
for d in /tmp/site kt_cli vendor_nvidia plugins $(python3 -c "import triton, os; print(os.path.dirname(triton.__file__))") $(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))"); do python3 -m compileall -q -j 16 $d > /dev/null 2>&1; done
for size in 8192 4096 8192 4096; do T0=$(date +%s.%N); python3 benchmarks/experiments/autotune_fresh.py --t0 $T0 --size $size --json /tmp/res/autotune_all.jsonl 2>&1 | tail -1 | cut -c1-300; done | tee /tmp/res/autotune_fresh.txt
tail -n +3 /tmp/res/autotune_all.jsonl > /tmp/res/autotune.jsonl  # the first two compiled the configs
KT serve --idle 900 | tee /tmp/res/serve.txt
for recipe in matmul softmax; do KT tune recipes/$recipe.toml --out /tmp/res/prime_$recipe > /tmp/res/prime_$recipe.log 2>&1; done
for run in spare_1 alone_1 spare_2 alone_2 spare_3 alone_3; do
  mode=${run%_*}; unset KT_RESIDENT; if [ $mode = alone ]; then export KT_RESIDENT=0; fi
  for recipe in matmul softmax; do
    settled; KT --json serve --status > /tmp/res/status_${recipe}_$run.json
    T0=$(date +%s.%N)
    KT_PROFILE_DIR=/tmp/res/prof_${recipe}_$run KT tune recipes/$recipe.toml --out /tmp/res/art_${recipe}_$run > /tmp/res/${recipe}_$run.log 2>&1
    echo "$recipe $run: rc $? wall $(python3 -c "print(round($(date +%s.%N) - $T0, 2))") s; adopted $(cat /tmp/res/prof_${recipe}_$run/pipe-caller-*.log | grep -c '^adopt '); $(grep -h 'candidates in' /tmp/res/${recipe}_$run.log | cut -c1-60)" | tee -a /tmp/res/summary.txt
    python3 benchmarks/experiments/cli_first_results.py recipes/$recipe.toml /tmp/res/art_${recipe}_$run --t0 $T0 --autotune /tmp/res/autotune.jsonl | tee -a /tmp/res/summary.txt
    python3 benchmarks/experiments/startup_timeline.py /tmp/res/prof_${recipe}_$run --t0 $T0 --until 5 > /tmp/res/timeline_${recipe}_$run.txt 2>&1
  done
  (cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' --exclude='prime_*' *)
done
unset KT_RESIDENT; KT --json serve --status > /tmp/res/status_end.json; KT serve --stop; sleep 3
nvidia-smi --query-compute-apps=pid,used_memory --format=csv > /tmp/res/apps_after_stop.txt; cat /tmp/res/apps_after_stop.txt
cp /tmp/ktres/*.log /tmp/res/ 2>/dev/null
(cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' --exclude='prime_*' *)
grep -h "first sent" /tmp/res/timeline_matmul_*.txt | cut -c1-300
timeout 270 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py > /tmp/res/pytest_gpu.txt 2>&1; tail -4 /tmp/res/pytest_gpu.txt
(cd /tmp/res && tar czf $OUT/runs.tgz --exclude='art_*' --exclude='prime_*' *)
