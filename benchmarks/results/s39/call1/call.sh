#!/bin/bash
# Twenty-ninth session, call 3: pruning with the upper-bound rule on the held-out softmax whose best the
# old rule could prune (benchmarks/recipes/holdout_softmax_g.toml), against an unpruned run in the same call;
# each run in an artifact folder of its own (a shared one resumes the finished studies).
set -u
python3 -m compileall -q /tmp/site kt_cli vendor_nvidia plugins "$(python3 -c 'import triton,os;print(os.path.dirname(triton.__file__))')" >/dev/null 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" >> $OUT/gpu.txt
for run in ${RUNS:-prune_1 noprune prune_2}; do
  flag=""; [ "$run" = noprune ] && flag="--no-prune"
  timeout 170 python3 benchmarks/run.py --kernels holdout_softmax_g --trials 24 --no-anchors $flag --out /tmp/art_$run --json $OUT/$run.json > $OUT/$run.log 2>&1
  echo "$run rc=$?"
done
