#!/bin/bash
# For the next session with an nvidia-h200-x2 host: group commits (branch group-commits, "new") against main ("base"),
# `kt tune` of the matmul recipe at 128 trials a problem with KT_PROFILE_DIR (every write transaction stamped), two
# workers twice and one worker twice, alternating. Before the call, on the branch:
#     rm -rf _base && mkdir _base && git archive main kt_cli plugins recipes benchmarks/scale.py pyproject.toml | tar -x -C _base
# (and move benchmarks/results/s15 ... s19 aside: the tree must stay under 64 MiB). Read with the analysis of
# results/s44 (docs/performance.md, thirty-fourth session): write transactions a trial, their wall, search.write.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in w2_1 w1_1 w2_2 w1_2; do w=${run:1:1}; for code in new base; do
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  export KT_PROFILE_DIR=$OUT/r/pipes_${code}_$run
  (cd $dir && timeout 90 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_${code}_$run.log 2>&1); echo "$code $run rc=$? $(tail -1 $OUT/r/scale_${code}_$run.log)"
done; done
unset KT_PROFILE_DIR
(cd $OUT && tar czf runs.tgz r && rm -rf r)
