"""Static verification with the judge out of the candidate's reach.

Three processes take part. A judge worker loads only the module that defines the problem (the task's,
for generated code) and makes each run's inputs and reference outputs; the candidate's worker (fresh
for every kernel module) launches on copies of those inputs under the launch watch; this process,
where no candidate code ever runs, compares what the launch left with the reference. A candidate can
patch torch, kt or the reference in its own process all it likes: the verdict is not computed there.
Cases are made once per (shape, trial) and reused by every candidate of the problem.
"""

from __future__ import annotations

from kt_cli.evaluate.failure import WorkerFailure
from kt_cli.evaluate.launch_watch import every_watched_name
from kt_cli.evaluate.pool import WorkerPool
from kt_cli.evaluate.verify import Case, Judge, WrongResult, case_plan, pack, tolerance_for, unpack
from kt_cli.types import shape_key


class IsolatedVerifier:
    def __init__(self, timeout: float):
        self.timeout = timeout
        # under the interpreter a candidate may still reach for any vendor's device objects
        self.watched_names = every_watched_name()
        self.judge_pool = WorkerPool(1, {"TRITON_INTERPRET": "1"})
        self._cases: dict = {}  # (problem path, dtype, seed, shape key, trial) -> Case
        self._tolerance: dict = {}  # (problem path, dtype) -> the problem module's TOLERANCE[dtype]

    def stop(self) -> None:
        self.judge_pool.stop()

    def cases(self, source, runs: list, dtype: str, seed: int) -> list[Case]:
        problem = source.problem().path
        key = lambda shape, trial: (problem, dtype, seed, shape_key(shape), trial)  # noqa: E731
        missing = [(s, t) for s, t in runs if key(s, t) not in self._cases]
        if missing:
            made = unpack(self.judge_pool.call("make_cases", {"source": source, "runs": missing, "dtype": dtype,
                                                              "seed": seed}, self.timeout, restart_on=("crash", "timeout", "rejected")))
            for (s, t), fields in zip(missing, made["cases"]):
                self._cases[key(s, t)] = Case(**fields)
            self._tolerance[(problem, dtype)] = made["tolerance"]
        return [self._cases[key(s, t)] for s, t in runs]

    def verify(self, worker: WorkerPool, source, params: dict, shapes: list, dtype: str, seed: int,
               recipe_tolerance=None) -> dict:
        """Verification (as JSON) of `params` on `shapes`; raises WorkerFailure (`wrong`, `rejected`,
        `crash`, `timeout`) as the in-process verification does."""
        cases = self.cases(source, case_plan(shapes), dtype, seed)
        after = unpack(worker.call("launch_cases", {"source": source, "params": params, "options": {},
                                                    "inputs": pack([c.inputs for c in cases]),
                                                    "watched_names": self.watched_names},
                                   self.timeout, restart_on=("crash", "timeout", "rejected")))
        judge = Judge(tolerance_for(dtype, self._tolerance.get((source.problem().path, dtype)), recipe_tolerance))
        try:
            for case, tensors in zip([*cases, cases[0]], after):  # the last run repeats the first
                judge.judge(case, tensors)
        except WrongResult as exc:
            raise WorkerFailure("wrong", str(exc)) from None
        return judge.verification().to_json()
