# A/B of `kt tune RECIPE` wall time on one GPU: the code in ab_base/ (kt_cli, plugins and
# vendors of an earlier commit, `git archive REV -- kt_cli plugins vendor_nvidia vendor_amd`) against the
# working tree, alternating, N rounds. Run from the repository root; $OUT receives each run's log.
#     bash benchmarks/experiments/ab_tune.sh recipes/softmax.toml 3     # MODES="new base": the new code first
# Each run writes /tmp/ab_NAME_MODE_I: on a machine that kept them, a later call resumes finished studies.
# COLD=1: every run on an empty kt cache and Triton cache of its own (what the session records of
# benchmarks/results/s26 and s27 wrote inline in their call.sh). Each run's trials.jsonl and manifest.json
# are kept in $OUT beside its log.
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
root=$PWD
recipe=$1
name=$(basename "$recipe" .toml)
for i in $(seq "${2:-3}"); do
  for mode in ${MODES:-base new}; do
    if [ $mode = base ]; then dir=$root/ab_base; pp=$root/ab_base/plugins:$PYTHONPATH; else dir=$root; pp=$PYTHONPATH; fi
    run=${name}_${mode}_$i
    caches=()
    if [ "${COLD:-0}" = 1 ]; then
      rm -rf "/tmp/ab_$run" "/tmp/ab_ktc_$run" "/tmp/ab_tc_$run"
      caches=(KT_CACHE_DIR="/tmp/ab_ktc_$run" TRITON_CACHE_DIR="/tmp/ab_tc_$run")
    fi
    (cd "$dir" && /usr/bin/time -f "$mode wall %e s" env "${caches[@]}" PYTHONPATH="$pp" python3 -c "from kt_cli.cli import main; main()" \
      tune "$root/$recipe" --out "/tmp/ab_$run" > "$OUT/$run.log" 2>&1)
    tail -1 "$OUT/$run.log"; grep "this run" "$OUT/$run.log"
    for f in trials.jsonl manifest.json; do
      find "/tmp/ab_$run" -name "$f" -exec cp {} "$OUT/$run.$f" \;
    done
  done
done
