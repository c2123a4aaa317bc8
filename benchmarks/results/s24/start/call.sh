# one H100: where a cold matmul tune's first seconds go, worker by worker (KT_PROFILE_DIR, startup_timeline.py), twice
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee /tmp/res/gpu.txt
for i in 1 2; do
  rm -rf /tmp/ktc /tmp/tc /tmp/pipes$i; T0=$(date +%s.%N)
  KT_PROFILE_DIR=/tmp/pipes$i KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc timeout 90 python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --out /tmp/o$i > /tmp/res/prof$i.log 2>&1
  tail -1 /tmp/res/prof$i.log; find /tmp/o$i -name trials.jsonl -exec cp {} /tmp/res/prof$i.trials.jsonl \;
  python3 benchmarks/experiments/startup_timeline.py /tmp/pipes$i --t0 $T0 --until 20 > /tmp/res/startup$i.txt 2>&1; cat /tmp/res/startup$i.txt | cut -c1-220 | head -45
  cp -r /tmp/pipes$i /tmp/res/
done
cd /tmp/res && tar czf $OUT/all.tgz *
