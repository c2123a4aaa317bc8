# A 4x GPU host: the matmul recipe at 128 trials a problem, one worker and four, with the studies in a
# SQLite file (kt's default) and in a journal file (--storage PATH.log), alternating, each run cold; then
# two workers on the journal file.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
run() {  # storage workers tag
  timeout 150 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $2 --trials 128 --storage $1 --json /tmp/res/scale.jsonl > /tmp/res/scale_$1_w$2_$3.log 2>&1
  echo "$1 w$2 #$3 rc $? $(grep -o "'per_min': [0-9.]*" /tmp/res/scale_$1_w$2_$3.log) $(grep -o "'wall_s': [0-9.]*" /tmp/res/scale_$1_w$2_$3.log)"
}
for i in 1 2; do for w in 1 4; do for s in sqlite journal; do run $s $w $i; done; done; (cd /tmp/res && tar czf $OUT/runs.tgz *); done
run journal 2 1; run sqlite 2 1; (cd /tmp/res && tar czf $OUT/runs.tgz *)
