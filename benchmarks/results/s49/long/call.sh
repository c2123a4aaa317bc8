#!/bin/bash
# Thirty-ninth session, a 2x H200 host: how the two-worker ratio grows with the budget, the start amortized.
# benchmarks/scale.py, the matmul recipe at 512 trials a problem, cold: workers 2, 1, 2 at the session's final code.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; nproc > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/r/gpu.txt
i=0
for w in 2 1 2; do
  i=$((i+1)); run=w${w}_$i
  timeout 130 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 512 --json $OUT/r/scale.jsonl > $OUT/r/scale_$run.log 2>&1; echo "$run rc=$? $(tail -1 $OUT/r/scale_$run.log)"
  (cd $OUT && tar czf runs.tgz r)
done
(cd $OUT && tar czf runs.tgz r && rm -rf r)
