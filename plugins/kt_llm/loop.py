"""The propose -> gate -> compile -> verify -> measure/estimate -> feedback loop. Every proposal runs only
in kt's worker processes (through kt_cli.evaluate.evaluator.Evaluator); it is parsed only in a child
process with limits (kt_llm.screen), so a reply that cannot be parsed is a failed round, never a crash."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from kt_cli.errors import BadInput, EnvironmentProblem
from kt_llm import prompts
from kt_llm.client import BudgetSpent, RequestFailed
from kt_llm.screen import Screened, screen
from kt_llm.task import APPENDIX, assemble, without

MAX_FAILURES_SHOWN = 3


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Round:
    """One proposal and what became of it (one JSON line of NAME.llm.jsonl)."""

    round: int
    role: str  # what asked for the code: "coder", "coder+judge", "plan step N"
    calls: list = field(default_factory=list)  # per model call: role, prompt and response sha256
    failure_kind: str = ""
    message: str = ""
    file: str = ""
    source_sha256: str = ""
    problems: list = field(default_factory=list)

    @property
    def correct(self) -> bool:
        return self.failure_kind == "ok"

    def best_value(self) -> float | None:
        values = [p["seconds"] for p in self.problems if p["kind"] == "ok"]
        return sum(values) if self.correct and values else None

    def to_json(self, estimated: bool) -> dict:
        first = self.problems[0] if self.problems else {}
        return {"round": self.round, "role": self.role, "calls": self.calls, "file": self.file,
                "source_sha256": self.source_sha256,
                "compiled": self.failure_kind not in ("malformed", "request_error", "invalid", "compile_error",
                                                      "slow_compile", ""),
                "correct": self.correct, "failure_kind": self.failure_kind, "message": self.message,
                "speedup": first.get("speedup"), "fraction_of_peak": first.get("fraction_of_peak"),
                "speed_is_estimate": estimated, "problems": self.problems}


class Loop:
    def __init__(self, config, task, context, evaluator, client, work_dir: Path, on_round=None):
        self.config, self.task, self.context, self.ev, self.client = config, task, context, evaluator, client
        self.work_dir = work_dir
        self.on_round = on_round or (lambda r: None)
        self.recipe = context.recipe
        self.shapes = list(self.recipe.problem.shapes)
        self.rounds: list[Round] = []
        self.best: Round | None = None
        self.answered = False  # the endpoint has answered once: later request failures are failed rounds
        self.baseline: dict = {}  # (target, shape key) -> seconds of the task's own kernel (static mode)
        self.plan_steps: list[str] = []
        self.intro = prompts.task_text(task, self.recipe.problem.dtype, self.shapes,
                                       [p.spec.name for p in context.plans])

    @property
    def estimated(self) -> bool:
        return any(p.mode == "estimated" for p in self.context.plans)

    def run(self) -> Round | None:
        from kt_cli.kernel import KernelSource

        self.work_dir.mkdir(parents=True, exist_ok=True)
        if self.estimated and self.task.has_kernel:
            # the task's own kernel, estimated from bytes_moved as proposals are (their traffic() is dropped)
            path = self.work_dir / "task-baseline.py"
            path.write_text(without(self.task.text, ("traffic",)))
            task_source = KernelSource(str(path), "llm", self.task.name)
            for p in self._evaluate(task_source):
                if p["kind"] == "ok":
                    self.baseline[(p["target"], p["shape"])] = p["seconds"]
        for number in range(1, self.config.rounds + 1):
            record = Round(number, "coder")
            try:
                self._propose(record)
            except BudgetSpent as exc:
                record.failure_kind, record.message = "request_error", str(exc)
                self._finish(record)
                break
            except RequestFailed as exc:
                if exc.unreachable and not self.answered:
                    # nothing ever answered: the endpoint is wrong or down, not one failing round
                    raise EnvironmentProblem(
                        f"kernel.base_url {self.config.base_url}: no server answers ({exc}); start it, or fix "
                        "base_url (or KT_LLM_BASE_URL)") from None
                record.failure_kind, record.message = "request_error", str(exc)
            except prompts.Malformed as exc:
                record.failure_kind, record.message = "malformed", str(exc)
            self._finish(record)
        return self.best

    def _finish(self, record: Round) -> None:
        self.rounds.append(record)
        value = record.best_value()
        if value is not None and (self.best is None or value < self.best.best_value()):
            self.best = record
        self.on_round(record)

    def _ask(self, record: Round, role: str, system: str, prompt: str) -> str:
        messages = [{"role": "user", "content": prompt}]
        reply = self.client.complete(system, messages)
        self.answered = True
        record.calls.append({"role": role, "prompt_sha256": sha256(system + "\n" + prompt),
                             "response_sha256": sha256(reply.text), "tokens": reply.tokens})
        (self.work_dir / f"round-{record.round:02d}.{role}.prompt.txt").write_text(prompt)
        (self.work_dir / f"round-{record.round:02d}.{role}.response.txt").write_text(reply.text)
        return reply.text

    def _propose(self, record: Round) -> None:
        advice = ""
        best_code = Path(self.best.file).read_text().split(APPENDIX)[0].rstrip() + "\n" if self.best else ""
        if self.config.mode == "coder-judge" and self.best is not None:
            record.role = "coder+judge"
            reply = self._ask(record, "judge", prompts.JUDGE, prompts.judge_prompt(self.intro, self.best.to_json(
                self.estimated), best_code))
            bottleneck = prompts.parse_json(reply, "bottleneck", str)
            advice = f"Bottleneck: {bottleneck}\nPlan: {prompts.parse_json(reply, 'plan', str)}"
        elif self.config.mode == "plan-then-code":
            if not self.plan_steps:
                reply = self._ask(record, "planner", prompts.PLANNER, self.intro)
                steps = prompts.parse_json(reply, "steps", list)
                self.plan_steps = [str(s) for s in steps]
            advice = self.plan_steps.pop(0)
            record.role = f"plan step: {advice[:80]}"
        failures = [r.to_json(self.estimated) for r in self.rounds if not r.correct][-MAX_FAILURES_SHOWN:]
        prompt = prompts.coder_prompt(self.intro, self.best.to_json(self.estimated) if self.best else None,
                                      best_code, failures, advice)
        reply = self._ask(record, "coder", prompts.PROTOCOL, prompt)
        self._check_and_run(record, screen(reply))

    def _check_and_run(self, record: Round, screened: Screened) -> None:
        """Run a screened reply (its code pulled out and gated in a child process: kt_llm.screen)."""
        if screened.code is None:
            record.failure_kind, record.message = screened.failure_kind, screened.message
            return
        path = self.work_dir / f"round-{record.round:02d}.py"
        path.write_text(assemble(screened.code, self.task))
        record.file, record.source_sha256 = str(path), sha256(path.read_text())
        if screened.failure_kind:
            record.failure_kind, record.message = screened.failure_kind, screened.message
            return
        from kt_cli.kernel import KernelSource

        record.problems = self._evaluate(KernelSource(str(path), "llm", self.config.name,
                                                      problem_path=str(self.task.path)))
        failed = [p for p in record.problems if p["kind"] != "ok"]
        record.failure_kind = failed[0]["kind"] if failed else "ok"
        record.message = failed[0]["message"] if failed else ""

    def _evaluate(self, source) -> list[dict]:
        """The module on every target and problem shape, at the first point of its SPACE that fits."""
        from kt_cli.types import shape_key

        self.ev.use(source)
        try:
            info = self.ev.inspect_module(self.shapes)
        except BadInput as exc:
            # a module that does not import or lacks a protocol function is the model's compile error;
            # a hang or a crash while importing keeps its own kind
            found = re.search(r"checking the kernel module failed: (crash|timeout): ", str(exc))
            kind = found.group(1) if found else "compile_error"
            return [self._problem(p, s, kind, str(exc)) for p in self.context.plans for s in self.shapes]
        out = []
        for plan in self.context.plans:
            for shape in self.shapes:
                try:
                    params = first_point(self.recipe, info, plan, shape)
                except BadInput as exc:
                    out.append(self._problem(plan, shape, "invalid", str(exc)))
                    continue
                result = self.ev.evaluate(plan, shape, params)
                figures = self._problem(plan, shape, result.failure_kind, result.message)
                figures.update(params=params, seconds=result.value, resources=result.resources,
                               fraction_of_peak=result.stats.get("fraction_of_peak"))
                if result.ok and plan.mode == "measured":
                    from kt_cli.evaluate.profile import profile_candidate

                    figures["profiler"] = profile_candidate(source, plan.device, result, self.recipe.problem.dtype)
                if result.ok:
                    base = self.baseline.get((plan.spec.name, shape_key(shape)))
                    figures["speedup"] = result.stats.get("speedup") or (base / result.value if base else None)
                out.append(figures)
        return out

    @staticmethod
    def _problem(plan, shape: dict, kind: str, message: str) -> dict:
        from kt_cli.types import shape_key

        return {"target": plan.spec.name, "shape": shape_key(shape), "kind": kind, "message": message,
                "seconds": None, "speedup": None, "fraction_of_peak": None, "resources": {}}

    def write_jsonl(self, path: Path) -> None:
        path.write_text("".join(json.dumps(r.to_json(self.estimated), sort_keys=True) + "\n" for r in self.rounds))



def first_point(recipe, info: dict, plan, shape: dict) -> dict:
    """The first point of the module's SPACE that meets its CONSTRAINTS for this target and shape."""
    from kt_cli.recipe.space import constraint_env
    from kt_cli.search.plan import build_space

    space = build_space(recipe, info["space"], info["constraints"], plan.spec, set(shape))
    env_of = lambda point: constraint_env(point, shape, plan.spec.properties, recipe.problem.dtype_bytes)  # noqa: E731
    point = next(space.valid_points(env_of, max_points=100_000), None)
    if point is not None:
        return point
    raise BadInput(f"no point of SPACE meets CONSTRAINTS for {plan.spec.name} {shape}")
