#!/bin/bash
# Not run yet (written in the thirty-fifth session, whose device time was spent): a trial's creation and finish in
# SQLAlchemy Core and attributes replaced in one upsert (14cf250, 743462a: "new", the checkout) against dba6a5d ("base": Optuna's ORM; both stamp the write lock's holds), on an
# nvidia-h200-x4 host (on an -x2 host, `w4` runs use 2 workers: change the list). `kt tune` of the matmul recipe at
# 128 trials a problem, cold, with KT_PROFILE_DIR; four workers, one, two, four, alternating. Before the call:
#     rm -rf _base && mkdir _base && git archive dba6a5d kt_cli plugins recipes benchmarks/scale.py pyproject.toml | tar -x -C _base
# (and move results s15-s20, s26, s29 aside: the tree must stay under 64 MiB). The checkout also refuses the matmul
# kernels' over-limit shared memory before compiling (94a553b, a044636: a tenth of the base's trials were refused
# after a compile), so the rates compare both changes; the holds (scale_report.py) the writes alone. Read with
# benchmarks/experiments/scale_report.py r/scale_new.jsonl --pipes r/pipes_new_w4_1 r/pipes_new_w1_1 ... (run order).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in w4_1 w1_1 w2_1 w4_2; do w=${run:1:1}; for code in new base; do
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  export KT_PROFILE_DIR=$OUT/r/pipes_${code}_$run
  (cd $dir && timeout 90 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_${code}_$run.log 2>&1); echo "$code $run rc=$? $(tail -1 $OUT/r/scale_${code}_$run.log)"
done; done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
