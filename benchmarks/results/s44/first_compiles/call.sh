#!/bin/bash
# Thirty-fourth session, an nvidia-h200-x2 host: what a compile worker's first compiles do that its later ones do
# not (1.4-4.5 s of CPU each in s44/start, against 0.3-0.6 s in a run's middle). One cold `kt tune` of the matmul
# recipe (one worker), every worker request under cProfile (KT_PROFILE_DIR, KT_PROFILE_REQUESTS=1).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt
export KT_PROFILE_DIR=$OUT/r/pipes KT_PROFILE_REQUESTS=1 TRITON_CACHE_DIR=/tmp/tc1
timeout 150 python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --out /tmp/o1 > $OUT/r/tune.log 2>&1; echo "rc=$?"; tail -3 $OUT/r/tune.log
(cd $OUT && tar czf runs.tgz r && rm -rf r)
