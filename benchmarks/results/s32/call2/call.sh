# A 2x GPU host (no 4x host was lent; experiment, not kept as is): do the device's phases slow down with two workers because the
# compile pools share the device workers' physical cores (SMT)? Two workers as they are; with the compile
# pools kept off the first 4 physical cores (KT_EXP_RESERVE_CORES=4: pools sized to the rest); with 7
# compile workers a process (KT_EXP_COMPILE_WORKERS=7); alternating, twice; then one worker both ways.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
lscpu > /tmp/res/lscpu.txt; grep -E "^(Thread|Core|Socket|NUMA node)" /tmp/res/lscpu.txt; cat /sys/devices/system/cpu/cpu{0,1,32}/topology/thread_siblings_list | tr '\n' ' '; echo
run() {  # tag workers env...
  tag=$1 w=$2; shift 2
  env "$@" timeout 150 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json /tmp/res/scale_$tag.jsonl > /tmp/res/scale_${tag}_w$w.log 2>&1
  echo "$tag w$w rc $? $(grep -o "'per_min': [0-9.]*" /tmp/res/scale_${tag}_w$w.log) $(grep -o "device busy [0-9]*%" /tmp/res/scale_${tag}_w$w.log) $(grep -o "compile [0-9ms ]*, screen [0-9.ms ]*, verify [0-9.ms ]*, time [0-9.ms ]*" /tmp/res/scale_${tag}_w$w.log)"
}
for i in 1 2; do
  run base$i 2 A=1; run reserve$i 2 KT_EXP_RESERVE_CORES=4; run pool7_$i 2 KT_EXP_COMPILE_WORKERS=7
  (cd /tmp/res && tar czf $OUT/runs.tgz *)
done
run base1 1 A=1; run reserve1 1 KT_EXP_RESERVE_CORES=2; (cd /tmp/res && tar czf $OUT/runs.tgz *)
