# One H100: the multi-head LSTM/GRU (issue 19) through kt's tune and load beside cuDNN and the per-step loop,
# the GPU tests, then the Gluon GEMM's producer-register sweep.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
root=$PWD
timeout 250 python3 benchmarks/rnn_seq.py --kernels lstm_heads,gru_heads --json /tmp/res/rnn_heads.json > /tmp/res/rnn_heads.log 2>&1; echo "rnn rc $?"; tail -25 /tmp/res/rnn_heads.log | cut -c1-220
cd /tmp/res && tar czf $OUT/runs.tgz *; cd $root
timeout 300 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider --durations 8 > /tmp/res/test_gpu.log 2>&1; tail -14 /tmp/res/test_gpu.log | cut -c1-250
cd /tmp/res && tar czf $OUT/runs.tgz *; cd $root
