#!/bin/bash
# Thirty-ninth session's final code (a unit's last round of programs in the cost model, the `--workers` stamps) on an
# nvidia-h200 host: the README's main job, `kt tune recipes/softmax.toml`, timed from process start to exit, and the GPU
# tests (the two-GPU one skips on one GPU; the six recurrence verifications left out, their code unchanged).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nproc > $OUT/gpu.txt; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >> $OUT/gpu.txt
s=$(date +%s%N); python3 -c "from kt_cli.cli import main; main()" tune recipes/softmax.toml > $OUT/tune_softmax.log 2>&1; rc=$?; e=$(date +%s%N)
echo "kt tune recipes/softmax.toml: exit $rc, $(( (e - s) / 1000000 )) ms" | tee -a $OUT/tune_softmax.log; tail -4 $OUT/tune_softmax.log
s=$(date +%s); timeout 330 python3 -m pytest -q -m gpu tests/test_gpu.py -k "not recurrences" -p no:cacheprovider > $OUT/gpu_tests.log 2>&1; echo "gpu tests exit $? in $(( $(date +%s) - s )) s"; tail -5 $OUT/gpu_tests.log
