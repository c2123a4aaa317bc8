#!/bin/bash
# Thirty-fourth session, an nvidia-h200-x2 host: where a trial's wall outside its evaluation, its ask and its turn
# goes with two workers (0.27-0.33 s a trial against 0.07-0.22 s with one: s44/pairing_ab). `kt tune` of the matmul
# recipe at 128 trials a problem, one worker and two, with KT_PROFILE_DIR: every storage write transaction and
# every read of a study stamped (pipe-db-PID.log), every trial's writes before its evaluation in its record
# (search.write).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt
for i in 1 2; do for w in 1 2; do
  export KT_PROFILE_DIR=$OUT/r/pipes_w${w}_$i
  timeout 100 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale.jsonl > $OUT/r/scale_w${w}_$i.log 2>&1; echo "w$w #$i rc=$? $(tail -1 $OUT/r/scale_w${w}_$i.log)"
done; done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
