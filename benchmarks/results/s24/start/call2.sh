# one H100: a cold matmul tune with every worker request profiled (KT_PROFILE_REQUESTS=1): what the judge's
# first ready_judge (3-4 s in call.sh's runs, the device idle behind it) and the first launches spend
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/res; rm -rf /tmp/ktc /tmp/tc /tmp/pp; T0=$(date +%s.%N)
KT_PROFILE_REQUESTS=1 KT_PROFILE_DIR=/tmp/pp KT_CACHE_DIR=/tmp/ktc TRITON_CACHE_DIR=/tmp/tc timeout 90 python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --out /tmp/o > /tmp/res/prof.log 2>&1
tail -1 /tmp/res/prof.log; python3 benchmarks/experiments/startup_timeline.py /tmp/pp --t0 $T0 --until 20 2>&1 | cut -c1-200 | head -8
for op in ready_judge ready_device launch_held judge_cases; do f=$(ls /tmp/pp/$op-*-1.prof | head -1); echo "== $f"; python3 -c "
import pstats,sys; s=pstats.Stats(sys.argv[1]); s.sort_stats('cumulative').print_stats(28)" $f 2>&1 | grep -v "^$" | sed -n 1,40p | cut -c1-160; done
cp -r /tmp/pp /tmp/res/; cd /tmp/res && tar czf $OUT/all.tgz *
