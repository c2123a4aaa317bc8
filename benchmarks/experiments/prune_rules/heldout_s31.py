"""s31's matmul tunes (one H200, today's model, written while this study ran): never used to choose."""
import engine as E, tpe
RULES = [E.rule_a(1.5, 3), E.rule_a(1.45, 1), E.rule_adapt(1.5, 1, 0.3, 1.5, 5, 1.05, 0), E.rule_adapt(1.5, 1, 0.3, 1.5, 3, 1.05, 0)]
print('| rule | problems | run pruned itself | saved (replay, trial order) | lost >1% | worst kept/best |')
print('|---|---|---|---|---|---|')
for rule in RULES:
    rows = tpe.replay_mode(rule, 'run', tpe.HELD_OUT)
    print(f"| `{rule.name}` | {len(rows)} | {sum(r['run_saved'] for r in rows)/len(rows)*100:.0f}% | {sum(r['saved'] for r in rows)/len(rows)*100:.1f}% | "
          f"{sum(r['lost'] for r in rows)} | {max(r['kept_vs_best'] for r in rows):.3f} |")
for r in tpe.replay_mode(RULES[2], 'run', tpe.HELD_OUT):
    print(f"<!-- {r['file']} {r['problem']} n={r['n']} saved={r['saved']:.2f} kept/best={r['kept_vs_best']:.3f} -->")
