# One H100: the grid barrier of lstm_seq / gru_seq, three variants (benchmarks/experiments/rnn_barrier.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
cd benchmarks/experiments && timeout 420 python3 rnn_barrier.py --points "8,128,4;8,64,4;8,128,8;16,128,4" > /tmp/res/barrier.jsonl 2> /tmp/res/barrier.err; echo "rc $?"
python3 - <<'PY'
import json
rows = [json.loads(l) for l in open("/tmp/res/barrier.jsonl")]
for r in rows:
    p = r["params"]
    print(r["kernel"], f"B{r['shape']['B']} H{r['shape']['H']}", f"H{p['BLOCK_H']} K{p['BLOCK_K']} w{p['num_warps']}", r["variant"],
          f"{r.get('us_per_step', float('nan')):.2f} us/step", f"diff {r.get('max_abs_vs_cudnn', float('nan')):.3g}", r.get("error", "")[:120])
PY
tail -5 /tmp/res/barrier.err
cp /tmp/res/* $OUT/
