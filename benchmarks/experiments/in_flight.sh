# Experiment (not part of kt): `kt tune RECIPE` with the evaluator's trials in flight at its default
# (compile workers + 1) and at twice the compile workers + 1, alternating, N rounds; run from the
# repository root on a GPU host with $OUT set. Prints each run's wall and kt's summary line.
recipe=${1:-recipes/matmul.toml}
for i in $(seq "${2:-2}"); do
  for mode in default double; do
    patch=""
    if [ $mode = double ]; then
      patch="import kt_cli.evaluate.evaluator as e; e.Evaluator.in_flight = property(lambda self: 2 * len(self.compile_pool.workers) + 1); "
    fi
    /usr/bin/time -f "$mode wall %e s" python3 -c "${patch}from kt_cli.cli import main; main()" tune "$recipe" \
      --out "/tmp/if_${mode}_$i" > "$OUT/if_${mode}_$i.log" 2>&1
    tail -1 "$OUT/if_${mode}_$i.log"; grep "this run" "$OUT/if_${mode}_$i.log" | cut -c1-160
  done
done
