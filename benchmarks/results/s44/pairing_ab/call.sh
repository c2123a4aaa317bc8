#!/bin/bash
# Thirty-fourth session, an nvidia-h200-x2 host: the winners' pairing taken last and shared out between the workers
# (c9c39e4, "new") against the code before it (320c9f4, unpacked here as _base/), `kt tune` of the matmul recipe at
# 128 trials a problem, one worker and two, alternating, twice.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
mkdir -p $OUT/r; git rev-parse --short HEAD > $OUT/r/gpu.txt; nproc >> $OUT/r/gpu.txt
for i in 1 2; do for w in 1 2; do for code in new base; do
  dir=$PWD; [ $code = base ] && dir=$PWD/_base
  (cd $dir && timeout 100 python3 benchmarks/scale.py --recipe recipes/matmul.toml --workers $w --trials 128 --json $OUT/r/scale_$code.jsonl > $OUT/r/scale_${code}_w${w}_$i.log 2>&1); echo "$code w$w #$i rc=$? $(tail -1 $OUT/r/scale_${code}_w${w}_$i.log)"
done; done; done
(cd $OUT && tar czf runs.tgz r && rm -rf r)
