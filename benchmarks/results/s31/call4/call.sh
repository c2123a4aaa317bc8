# A 2x GPU host (asked as nvidia-h200-x2: no 4x host was lent then), three codes alternating, each run cold, the matmul recipe at 128
# trials a problem: A = c8a25fc (unpacked as _base/); B = the working tree (a trial's owner record and first
# heartbeat written in the transaction that makes it; a queued trial already taken is not written to);
# C = B with the host's kt processes queueing for SQLite's write lock in flock (unpacked as _flock/, not kept).
# Two workers twice each, then one worker once each.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
run() {  # code workers tag
  dir=$PWD; [ $1 = A ] && dir=$PWD/_base; [ $1 = C ] && dir=$PWD/_flock
  (cd $dir && timeout 120 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $2 --trials 128 --json /tmp/res/scale_$1.jsonl > /tmp/res/scale_$1_w$2_$3.log 2>&1); echo "$1 w$2 #$3 rc $? $(tail -1 /tmp/res/scale_$1_w$2_$3.log | cut -c1-120)"
}
for i in 1 2; do for c in A B C; do run $c 2 $i; done; done
cd /tmp/res && tar czf $OUT/runs.tgz *; cd - >/dev/null
for c in A B C; do run $c 1 1; done
cd /tmp/res && tar czf $OUT/runs.tgz *
