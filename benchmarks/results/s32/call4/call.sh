# One H200 (no 2x host was lent), the search code of 7032887 (versioned reads reverted): where a kt
# process's CPU goes alone and when another process shares its studies. py-spy samples every process of a
# cold `kt tune recipes/matmul.toml --trials 128` at 100 Hz (idle stacks left out): first one process,
# then two processes started together on the same database and the same GPU (as two hosts would share a
# --storage); the kt processes' samples are read apart from the compile pools' afterwards.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 3
export TRITON_DEFAULT_FP_FUSION=1 PYTHONUNBUFFERED=1
rm -rf /tmp/res; mkdir -p /tmp/res; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee /tmp/res/gpu.txt; nproc | tee -a /tmp/res/gpu.txt
tune() {  # tag
  TRITON_CACHE_DIR=/tmp/p/tc timeout 200 /tmp/site/bin/py-spy record -r 100 -s --nonblocking -f raw -o /tmp/res/$1.txt -- python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --trials 128 --storage sqlite:////tmp/p/study.db --out /tmp/p/$1 > /tmp/res/$1.log 2>&1; echo "$1 rc $?"; tail -3 /tmp/res/$1.log
}
count() {  # tag
  python3 - <<PY >> /tmp/res/trials.txt
import optuna
from kt_cli.search.storage import open_storage, evaluated
s = open_storage("sqlite:////tmp/p/study.db")
for summ in optuna.get_all_study_summaries(s, include_best_trial=False):
    if summ.study_name.startswith("kt-artifact|"): continue
    st = optuna.load_study(study_name=summ.study_name, storage=s)
    ev = evaluated(st)
    spans = {}
    for t in ev:
        p = t.user_attrs.get("pid"); a, b = spans.get(p, (1e18, 0))
        spans[p] = (min(a, t.datetime_start.timestamp()), max(b, t.datetime_complete.timestamp()))
    print("$1", summ.study_name[:30], "trials", len(st.trials), "evaluated", len(ev), {p: (sum(1 for t in ev if t.user_attrs.get("pid") == p), round(b - a, 1)) for p, (a, b) in spans.items()})
PY
}
rm -rf /tmp/p; mkdir -p /tmp/p; tune one; count one
rm -rf /tmp/p; mkdir -p /tmp/p; tune twoA & sleep 0.5; tune twoB; wait; count two
cat /tmp/res/trials.txt; (cd /tmp/res && tar czf $OUT/runs.tgz *)
