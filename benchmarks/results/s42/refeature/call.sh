#!/bin/bash
# Thirty-second session: the stored ranking datasets' features read again on a GPU host with the Triton their
# runs were timed with (3.6.0): benchmarks/experiments/gpu_host_features.py compile, held-out runs first.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)" | tee $OUT/versions.txt
nproc >> $OUT/versions.txt
timeout 430 python3 benchmarks/experiments/gpu_host_features.py compile benchmarks/results/s42/refeature/prepared /tmp/refeat --jobs 16 > $OUT/compile.log 2>&1; echo "compile rc=$?"
tar czf $OUT/refeature.tgz -C /tmp/refeat . ; tail -25 $OUT/compile.log | grep -v -i warn
