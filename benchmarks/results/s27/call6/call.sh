# The same H100 as call 5, warm: the sequence-fused LSTM and GRU against cuDNN and a per-step loop
# (benchmarks/rnn_seq.py: kt tunes each problem, then times its winner through kt_cli.load beside the anchors).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/res6; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res6/gpu.txt; lscpu | grep -E "Model name|^CPU\(s\)" | tee -a /tmp/res6/gpu.txt
timeout 480 python3 benchmarks/rnn_seq.py --trials 4 --json /tmp/res6/rnn_seq.json > /tmp/res6/rnn_seq.log 2>&1; echo "rc $?"; grep -v -i warn /tmp/res6/rnn_seq.log | tail -14
cd /tmp/res6 && tar czf $OUT/runs.tgz *
