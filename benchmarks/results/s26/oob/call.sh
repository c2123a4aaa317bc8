# One H100. Why a winner's pairing with its reference crashed with an illegal memory access (2 of 2
# one-worker matmul runs on the 4x host, results/s26/x4): a cold `kt tune recipes/matmul.toml`, its
# artifact's pairing verdicts, then every verified (shape, config) of its trials launched once under
# compute-sanitizer's memcheck with torch's caching allocator off (benchmarks/experiments/oob_check.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 KT_CACHE_DIR=/tmp/ktcache
rm -rf /tmp/res /tmp/ktcache ~/.triton/cache; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt
kt() { python3 -c "from kt_cli.cli import main; main()" "$@"; }
timeout 120 kt tune recipes/matmul.toml --out /tmp/res/art > /tmp/res/tune.log 2>&1; echo "tune rc $?"; tail -12 /tmp/res/tune.log
python3 - <<'PY'
import json
m = json.load(open("/tmp/res/art/matmul.kt/manifest.json"))
for e in m.get("entries", m.get("results", [])):
    s = e.get("stats", {})
    print(e["shape"], e["params"], "pairing:", s.get("check_pairing_failed") or s.get("check_speedup"))
PY
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 330 compute-sanitizer --tool memcheck --print-limit 30 python3 benchmarks/experiments/oob_check.py --recipe recipes/matmul.toml --trials /tmp/res/art/matmul.kt/trials.jsonl --limit 150 > /tmp/res/memcheck.log 2>&1; echo "memcheck rc $?"
grep -c '^[0-9]' /tmp/res/memcheck.log; grep -m 30 -E 'Invalid|ERROR SUMMARY|at .*kernel|Address|^=========     Host Frame.*launch' /tmp/res/memcheck.log | cut -c1-250; tail -3 /tmp/res/memcheck.log | cut -c1-300
cd /tmp/res && tar czf $OUT/all.tgz *
