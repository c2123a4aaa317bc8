# One H100: Nsight Compute counters of kt's tile kernels where issue 19's targets are missed, beside the
# anchors' kernels (benchmarks/experiments/tile_ncu.py), then a screen's time split into probe and capture
# in one cold matmul tune (the working tree).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt
root=$PWD
(cd benchmarks/experiments && timeout 420 python3 tile_ncu.py --json /tmp/res/tile_ncu.json > /tmp/res/tile_ncu.log 2>&1); cut -c1-400 /tmp/res/tile_ncu.log | grep -v Warn
cd /tmp/res && tar czf $OUT/runs.tgz *; cd $root
rm -rf /tmp/ktc /tmp/tc /tmp/o_mm
env KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc /usr/bin/time -f "mm wall %e s" timeout 90 python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --out /tmp/o_mm > /tmp/res/mm.log 2>&1; tail -1 /tmp/res/mm.log
find /tmp/o_mm -name trials.jsonl -exec cp {} /tmp/res/mm.trials.jsonl \;
cd /tmp/res && tar czf $OUT/runs.tgz *
