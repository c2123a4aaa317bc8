# One H100: the multi-head GRU (issue 19; call 2's run ended after the LSTM), then the Gluon GEMM's
# producer-register sweep (PRODUCER_REGS, the knob no recipe lists).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
root=$PWD
timeout 280 python3 benchmarks/rnn_seq.py --kernels gru_heads --json /tmp/res/rnn_gru_heads.json > /tmp/res/rnn_gru_heads.log 2>&1; echo "rnn rc $?"
cd /tmp/res && tar czf $OUT/runs.tgz *; cd $root
timeout 200 python3 benchmarks/gluon_gemm.py --sizes 4096 8192 --configs 3 --producer-regs 40 24 56 88 --json /tmp/res/producer_regs.json > /tmp/res/producer_regs.log 2>&1; echo "regs rc $?"; tail -20 /tmp/res/producer_regs.log | cut -c1-200
cd /tmp/res && tar czf $OUT/runs.tgz *; cd $root
