python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider -k fp8 -x 2>&1 | grep -v "^ *$" | grep -E "Error|assert|failure_kind|message" | cut -c1-600 | head -20
cat > /tmp/one.toml <<'R'
[kernel]
generator = "templates"
name = "matmul"
[problem]
dtype = "float8_e4m3"
shapes = [{M = 4096, N = 4096, K = 4096}]
[search]
trials = 4
sampler = "grid"
[search.space]
BLOCK_M = [128]
BLOCK_N = [256]
BLOCK_K = [128]
GROUP_M = [8]
SPLIT_K = [1]
PROGRAMS_PER_UNIT = [1]
UNITS = [132]
TMA = [1]
GLUON = [0, 1]
num_warps = [8]
num_stages = [3]
[targets]
names = ["nvidia:sm_90"]
R
for shape in "M = 4096, N = 4096, K = 4096" "M = 8192, N = 8192, K = 8192"; do
  sed "s/M = 4096, N = 4096, K = 4096/$shape/" /tmp/one.toml > /tmp/one_s.toml
  python3 -c "from kt_cli.cli import main; main()" tune /tmp/one_s.toml --out /tmp/o1 > $OUT/one.log 2>&1; grep -E "measured|this run" $OUT/one.log | cut -c1-200
  python3 - <<'P'
import json,glob
for f in glob.glob('/tmp/o1/*/trials.jsonl'):
    for l in open(f):
        t=json.loads(l); st=t.get('stats') or {}
        print(t['params']['GLUON'], t['failure_kind'], st.get('median'), st.get('calls'), st.get('raced_out'), (t.get('message') or '')[:300])
P
  rm -rf /tmp/o1
done
python3 benchmarks/gluon_gemm.py --dtype float8_e4m3 --sizes 4096 2>&1 | tail -2
