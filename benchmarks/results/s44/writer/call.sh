#!/bin/bash
# Thirty-fourth session, an nvidia-h200-x2 host: one write transaction at a time from a process's threads (92ef568,
# "new") against the code before it (3a691e2, unpacked here as _base/), `kt tune` of the matmul recipe at 128 trials
# a problem with KT_PROFILE_DIR (every write transaction stamped): two workers twice, one worker once, alternating;
# then the GPU tests but the recurrences' and the README's main job, at the new code.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
for run in w2_1 w1_1 w2_2; do w=${run:1:1}; for code in new base; do
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  export KT_PROFILE_DIR=$OUT/r/pipes_${code}_$run
  (cd $dir && timeout 90 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_${code}_$run.log 2>&1); echo "$code $run rc=$? $(tail -1 $OUT/r/scale_${code}_$run.log)"
done; done
unset KT_PROFILE_DIR
( time timeout 120 python3 -c "from kt_cli.cli import main; main()" tune recipes/softmax.toml --out /tmp/art_softmax ) > $OUT/r/tune_softmax.log 2>&1; echo "kt tune recipes/softmax.toml rc $?"; tail -4 $OUT/r/tune_softmax.log
timeout 230 python3 -m pytest -q -m gpu tests/test_gpu.py -k "not recurrences" > $OUT/r/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; tail -3 $OUT/r/gpu_tests.log
(cd $OUT && tar czf runs.tgz r && rm -rf r)
