# One H100, HEAD 7efe2c6: where the search's CPU goes in a real run. py-spy samples a cold
# `kt tune recipes/matmul.toml --trials 128` (one worker; call 1 read search.ask at 0.34-0.42 s a trial
# there, 0.06 s for the search alone on a 2-core CPU machine), then the search alone on this host.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res /tmp/p; mkdir -p /tmp/res /tmp/p; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
export TRITON_CACHE_DIR=/tmp/p/tc
timeout 200 /tmp/site/bin/py-spy record -r 100 -s --nonblocking --threads -f raw -o /tmp/res/tune128.txt -- python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --trials 128 --storage sqlite:////tmp/p/study.db --out /tmp/p > /tmp/res/tune128.log 2>&1; echo "rc $?"; tail -12 /tmp/res/tune128.log
cp /tmp/p/study.db /tmp/res/ 2>/dev/null
timeout 100 python3 benchmarks/experiments/search_scaling.py --processes 1 --trials 128 --compile-s 1.0 --device-s 0.05 --in-flight 16 2>&1 | tail -2
cd /tmp/res && tar czf $OUT/runs.tgz *
