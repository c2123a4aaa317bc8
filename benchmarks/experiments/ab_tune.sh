# A/B of `kt tune RECIPE` wall time on one GPU: the code in ab_base/ (kt_cli, plugins and
# vendors of an earlier commit, `git archive REV -- kt_cli plugins vendor_nvidia vendor_amd`) against the
# working tree, alternating, N rounds. Run from the repository root; $OUT receives each run's log.
#     bash benchmarks/experiments/ab_tune.sh recipes/softmax.toml 3     # MODES="new base": the new code first
# Each run writes /tmp/ab_NAME_MODE_I: on a machine that kept them, a later call resumes finished studies.
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
root=$PWD
recipe=$1
name=$(basename "$recipe" .toml)
for i in $(seq "${2:-3}"); do
  for mode in ${MODES:-base new}; do
    if [ $mode = base ]; then dir=$root/ab_base; pp=$root/ab_base/plugins:$PYTHONPATH; else dir=$root; pp=$PYTHONPATH; fi
    (cd "$dir" && /usr/bin/time -f "$mode wall %e s" env PYTHONPATH="$pp" python3 -c "from kt_cli.cli import main; main()" \
      tune "$root/$recipe" --out "/tmp/ab_${name}_${mode}_$i" > "$OUT/${name}_${mode}_$i.log" 2>&1)
    tail -1 "$OUT/${name}_${mode}_$i.log"; grep "this run" "$OUT/${name}_${mode}_$i.log"
  done
done
