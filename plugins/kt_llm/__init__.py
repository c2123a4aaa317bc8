"""The `llm` generator: a language model proposes kernel modules, kt's workers gate, compile, verify and
time (or estimate) each one, the figures go back to the model; the best verified module is then tuned
by kt's normal search over its SPACE. See docs/llm.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kt_cli.errors import BadInput, EnvironmentProblem, JobFailed
from kt_cli.hookspecs import hookimpl


class LlmGenerator:
    name = "llm"
    needs_context = True  # it runs candidates in kt's workers while it builds

    def build(self, kernel_table: dict, recipe_path: Path, context=None):
        from kt_cli.kernel import KernelSource
        from kt_llm.client import Budget, ChatClient
        from kt_llm.config import parse_config
        from kt_llm.loop import Loop
        from kt_llm.task import resolve_task

        config = parse_config(kernel_table, recipe_path)
        if context is None:
            raise BadInput(f"{recipe_path}: kernel.generator: the llm generator runs only inside kt tune")
        task = resolve_task(config.task, recipe_path)
        out_dir = Path(context.out_dir)
        name = context.recipe.name
        client = ChatClient(config, Budget(config.max_requests, config.max_tokens))
        evaluator = context.evaluator(KernelSource(str(task.path), self.name, task.name))
        loop = Loop(config, task, context, evaluator, client, out_dir / f"{name}.llm", on_round=_report_round)
        existed = out_dir.exists()
        try:
            best = loop.run()
        except EnvironmentProblem:  # no model ever answered: no round to keep, nothing left behind
            shutil.rmtree(loop.work_dir if existed else out_dir, ignore_errors=True)
            raise
        except BaseException:
            _write_log(loop, out_dir, name)  # the rounds so far, where the artifact would have gone
            raise
        finally:
            evaluator.close()
        _write_log(loop, out_dir, name)
        if best is None:
            raise JobFailed(f"llm: no proposal passed the gates and verification in {len(loop.rounds)} rounds; "
                            f"see {out_dir / f'{name}.llm.jsonl'}")
        meta = {**config.public(), "task": task.name, "best_round": best.round,
                "rounds": [{"round": r.round, "role": r.role, "failure_kind": r.failure_kind,
                            "source_sha256": r.source_sha256, "calls": r.calls} for r in loop.rounds]}
        return KernelSource(best.file, self.name, config.name, meta=meta, problem_path=str(task.path))


def _write_log(loop, out_dir: Path, name: str) -> None:
    """Every round, and the loop's figures, beside the artifact (also when the loop failed)."""
    from kt_llm.report import summary

    out_dir.mkdir(parents=True, exist_ok=True)
    loop.write_jsonl(out_dir / f"{name}.llm.jsonl")
    (out_dir / f"{name}.llm.summary.json").write_text(json.dumps(summary(loop), indent=2, sort_keys=True) + "\n")


def _report_round(record) -> None:
    """One stderr line per round: the loop can take many minutes before kt's own search starts."""
    import click

    why = f": {record.message[:120]}" if record.message else ""
    click.echo(f"llm round {record.round} ({record.role}): {record.failure_kind}{why}", err=True)


@hookimpl
def kt_register_generators(register):
    register(LlmGenerator())
