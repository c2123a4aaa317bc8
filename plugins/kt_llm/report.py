"""Figures for use as a reward or an evaluation: the summary of one llm run.

- correct_rate: correct proposals / proposals (every round counts, failed requests included).
- fast_1, fast_1.5: over the problems (target x shape), the fraction whose best correct proposal is
  faster than the reference by more than 1x / 1.5x. Measured mode: the speedup over the baseline torch
  op timed in the same run. Static mode: the ratio of cost-model estimates, the task's own kernel over
  the proposal (`speed_is_estimate` is true; no time was measured).
- proficiency_at_10 (for HPC kernels, where many correct-but-slow proposals are common): the fraction of
  the first 10 proposals that are correct and within 2x of the best proposal's time; proposals that
  were never made (fewer than 10 rounds) count as misses.
"""

from __future__ import annotations

from kt_cli.types import failure_counts


def summary(loop) -> dict:
    rounds = loop.rounds
    correct = [r for r in rounds if r.correct]
    best = loop.best
    problems = []
    for index, first in enumerate(best.problems if best else []):
        speedups = [r.problems[index].get("speedup") for r in correct if len(r.problems) > index]
        problems.append({"target": first["target"], "shape": first["shape"],
                         "best_speedup": max([s for s in speedups if s is not None], default=None)})
    count = max(len(problems), len(loop.context.plans) * len(loop.shapes))

    def fast(p: float) -> float:
        return sum(1 for q in problems if q["best_speedup"] is not None and q["best_speedup"] > p) / count

    best_value = best.best_value() if best else None
    proficient = [r for r in rounds[:10] if r.correct and r.best_value() <= 2 * best_value] if best else []
    return {
        "model": loop.config.model, "mode": loop.config.mode, "task": loop.task.name,
        "speed_is_estimate": loop.estimated,
        "proposals": len(rounds), "kinds": failure_counts(rounds),
        "correct_rate": len(correct) / len(rounds) if rounds else 0.0,
        "fast_1": fast(1.0), "fast_1.5": fast(1.5),
        "proficiency_at_10": len(proficient) / 10,
        "best_round": best.round if best else None,
        "problems": problems,
        "requests": loop.client.budget.requests, "tokens": loop.client.budget.tokens,
    }
