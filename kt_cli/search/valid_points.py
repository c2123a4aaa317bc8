"""Proposals drawn among the points that meet the constraints.

A recipe's constraints refuse most of a space (the matmul recipe on sm_90: 1762 of 62208 points, 2.8%:
a knob like UNITS == units keeps one value in four, shared memory and register limits cut the rest).
An Optuna sampler knows nothing of them: before this, TPE's proposals broke a constraint in 162 of the
258 trials of a matmul run (H200, 2026-11-26), each an Optuna trial of its own with its ask, its turn
and its storage writes in the CLI process, beside the trials the device waits for.

Where a problem's space can be enumerated, kt knows its valid points (the feasibility check lists them
anyway), and `RepairingSampler` wraps the recipe's sampler so that every joint proposal is one of them:
a proposal that breaks a constraint, or names a point already proposed (by this process, or drawn by
another sharing the study), becomes the nearest valid point not yet proposed (distance: the steps
between values along each ordered knob over its number of steps, 1 for a different string or boolean);
a sampler with no model yet (TPE's start, the random sampler) draws uniformly among them. The sampler
then models only what it can propose."""

from __future__ import annotations

import random
import threading

from kt_cli.recipe.space import Param, SearchSpace


class ValidPoints:
    """The valid points of one problem's space, given by their indices in the space's order."""

    def __init__(self, space: SearchSpace, indices):
        # numpy, single-threaded: the search asks from the CLI process beside a busy compile pool, where
        # torch's CPU operations run on an OpenMP pool (the timer's bootstrap took 17 ms a call so,
        # docs/performance.md, sixth session)
        import numpy as np

        self.names = [p.name for p in space.params]
        self.values = [list(p.all_values()) for p in space.params]
        self.position = [{_key(v): i for i, v in enumerate(values)} for values in self.values]
        self.weights = np.array([_step_weight(p, len(v)) for p, v in zip(space.params, self.values)],
                                dtype=np.float32)
        self.ordered = np.array([_is_ordered(p) for p in space.params], dtype=bool)
        rows = [tuple(self._value_indices(i)) for i in indices]
        self.grid = np.array(rows, dtype=np.float32).reshape(len(rows), len(self.names))
        self.taken = np.zeros(len(rows), dtype=bool)
        self.row = {r: n for n, r in enumerate(rows)}
        self.lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.row)

    def _value_indices(self, index: int) -> list[int]:
        """The position of each knob's value in its list, for the point at `index` (the last knob fastest)."""
        out = []
        for values in reversed(self.values):
            index, i = divmod(index, len(values))
            out.append(i)
        return out[::-1]

    def point(self, row: int) -> dict:
        return {n: values[int(i)] for n, values, i in zip(self.names, self.values, self.grid[row].tolist())}

    def row_of(self, params: dict) -> int | None:
        """The row of `params` among the valid points, None when it breaks a constraint (or is not in the space)."""
        try:
            key = tuple(self.position[k][_key(params[n])] for k, n in enumerate(self.names))
        except KeyError:
            return None
        return self.row.get(key)

    def mark(self, params: dict) -> None:
        """`params` was proposed (here or, as a finished trial says, elsewhere): not proposed again."""
        row = self.row_of(params)
        if row is not None:
            with self.lock:
                self.taken[row] = True

    def nearest(self, params: dict, rng: random.Random) -> dict:
        """`params` when it is valid and not yet proposed, else the nearest such point (ties drawn at
        random); once every valid point was proposed, the nearest valid point."""
        import numpy as np

        with self.lock:
            row = self.row_of(params)
            if row is None or self.taken[row]:
                target = np.array([self.position[k].get(_key(params.get(n)), 0)
                                   for k, n in enumerate(self.names)], dtype=np.float32)
                diff = np.abs(self.grid - target)
                diff = np.where(self.ordered, diff, (diff > 0).astype(np.float32))
                distance = (diff * self.weights).sum(axis=1)
                if not self.taken.all():
                    distance = np.where(self.taken, np.inf, distance)
                closest = np.flatnonzero(distance == distance.min()).tolist()
                row = closest[rng.randrange(len(closest))]
            self.taken[row] = True
            return self.point(row)

    def draw(self, rng: random.Random) -> dict:
        """A valid point not yet proposed, uniformly (any valid point once all were)."""
        import numpy as np

        with self.lock:
            free = np.flatnonzero(~self.taken).tolist() or list(range(len(self)))
            row = free[rng.randrange(len(free))]
            self.taken[row] = True
            return self.point(row)


def _key(value):
    return (type(value).__name__, value)


def _is_ordered(param: Param) -> bool:
    """Numbers have an order (a step to the next value); strings and booleans are just different."""
    return not param.values or all(type(v) in (int, float) for v in param.values)


def _step_weight(param: Param, count: int) -> float:
    """One knob's full span counts 1 whatever its number of values; a string or boolean differs by 1."""
    if count <= 1:
        return 0.0
    return 1.0 / (count - 1) if _is_ordered(param) else 1.0


def repairing(inner, valid: ValidPoints, space: SearchSpace, seed: int):
    """`inner` (an Optuna sampler) whose joint proposals are always valid points (module docstring)."""
    import optuna

    distributions = {p.name: p.distribution() for p in space.params}
    varying = {p.name for p in space.params if len(p.all_values()) > 1}
    single = {p.name: p.all_values()[0] for p in space.params if p.name not in varying}  # left out of joint draws

    class RepairingSampler(optuna.samplers.BaseSampler):
        def __init__(self):
            self.inner, self.rng, self.marked = inner, random.Random(seed), set()

        def infer_relative_search_space(self, study, trial):
            # a sampler with no joint model yet (TPE's start, the random sampler) proposes nothing
            # jointly: the whole space is then handed to sample_relative, which draws a valid point
            return self.inner.infer_relative_search_space(study, trial) or \
                {n: d for n, d in distributions.items() if n in varying}

        def sample_relative(self, study, trial, search_space):
            if not varying <= set(search_space):  # a partial joint space: nothing to repair against
                return self.inner.sample_relative(study, trial, search_space)
            self._mark_study(study)
            if trial.system_attrs.get("fixed_params"):  # an enqueued point (a seed, a start-up point, a
                return {}  # retry), marked with the study's: Optuna uses it as it is
            proposed = self.inner.sample_relative(study, trial, search_space)
            point = valid.nearest({**single, **proposed}, self.rng) if varying <= set(proposed) \
                else valid.draw(self.rng)
            return {n: v for n, v in point.items() if n in search_space}

        def sample_independent(self, study, trial, param_name, param_distribution):
            return self.inner.sample_independent(study, trial, param_name, param_distribution)

        def before_trial(self, study, trial):
            self.inner.before_trial(study, trial)

        def after_trial(self, study, trial, state, values):  # (its point is marked at the next ask's _mark_study)
            self.inner.after_trial(study, trial, state, values)

        def reseed_rng(self):
            self.inner.reseed_rng()

        def _mark_study(self, study) -> None:
            """Every point the study holds is not proposed again: a resumed study's, those enqueued (the
            kernel's seeds), and those other processes sharing the study drew since the last look. With
            only its own marked, a process's TPE proposed what another had just evaluated as the two
            converged: two processes on a 128-trial study answered 23 duplicates and skipped 41 trials,
            one process 0 and 10 (benchmarks/experiments/search_scaling.py, nineteenth session)."""
            # the ask's own read of the study, which TPE's draw then reuses (Optuna's per-ask cache)
            for t in study._get_trials(deepcopy=False, use_cache=True):
                if t.number not in self.marked:
                    point = t.params or t.system_attrs.get("fixed_params")
                    if point:
                        valid.mark(point)
                        self.marked.add(t.number)

    return RepairingSampler()
