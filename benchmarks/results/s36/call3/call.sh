# One H200, the session's final model (1713b60): `kt devices --calibrate` (the DRAM knee fitted on the device
# itself, printed in its constants), then the GPU tests (the SASS reader's new operand bytes on real compiles,
# measured tuning with pruning under the new model).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv,noheader | tee /tmp/res/gpu.txt
CUDA_VISIBLE_DEVICES=0 timeout 60 python3 -c "from kt_cli.cli import main; main()" --json devices --calibrate > /tmp/res/calibrate.json 2> /tmp/res/calibrate.err; python3 -c "
import json; d = json.load(open('/tmp/res/calibrate.json'))
print([(x['name'], x['calibration']['constants']) for x in d['devices'] if 'calibration' in x])"
(cd /tmp/res && tar czf $OUT/runs.tgz *)
timeout 420 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider --durations 8 > /tmp/res/test_gpu.log 2>&1; echo "pytest rc $?"; tail -14 /tmp/res/test_gpu.log | cut -c1-250
(cd /tmp/res && tar czf $OUT/runs.tgz *)
