#!/bin/bash
# Thirty-third session, the final code (DEVICE_QUEUE 8 where the model orders and prunes): the GPU tests but the
# recurrences' verification (unchanged code, 190 s of the 370; all of them passed at this session's earlier code:
# s43/gpu_tests), and the README's main job.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $OUT/gpu.txt
( time timeout 120 python3 -c "from kt_cli.cli import main; main()" tune recipes/softmax.toml --out /tmp/art_softmax ) > $OUT/tune_softmax.log 2>&1; echo "kt tune recipes/softmax.toml rc $?"; tail -5 $OUT/tune_softmax.log
timeout 280 python3 -m pytest -q -m gpu tests/test_gpu.py -k "not recurrences" > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"
tail -3 $OUT/gpu_tests.log
