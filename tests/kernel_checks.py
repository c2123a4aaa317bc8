"""Helpers for kernel-library tests: run a template through kt's own workers (interpreter verification,
cross-compilation) exactly as `kt tune` does."""

from __future__ import annotations

import functools

from kt_cli.kernel import KernelSource
from kt_cli.plugins import target as target_spec
from kt_cli.types import Candidate
from kt_cli.evaluate.isolated import IsolatedVerifier
from kt_cli.evaluate.pool import Worker, WorkerPool

_workers: dict = {}


def worker(interpret: bool) -> Worker:
    if interpret not in _workers:
        _workers[interpret] = Worker({"TRITON_INTERPRET": "1" if interpret else "0"})
    return _workers[interpret]


def stop_workers() -> None:
    for w in _workers.values():
        w.stop()
    _workers.clear()


def verify_source(source: KernelSource, params: dict, shapes: list, dtype: str) -> dict:
    """Interpreter verification as `kt tune` does it: judged by a worker that loads only the problem,
    the launches in a worker of their own (raises WorkerFailure, kind 'wrong', on a wrong result)."""
    if "judge" not in _workers:
        _workers["judge"] = IsolatedVerifier(600, {"TRITON_INTERPRET": "1"})
        _workers["launches"] = WorkerPool(1, {"TRITON_INTERPRET": "1"})
    return _workers["judge"].verify(_workers["launches"], source, params, {}, shapes, dtype, 0)


@functools.lru_cache(maxsize=None)
def template(name: str) -> KernelSource:
    from kt_templates import TemplatesGenerator

    from pathlib import Path

    return TemplatesGenerator().build({"generator": "templates", "name": name}, Path("test.toml"))


def inspect_module(name: str, dtype: str, shapes: list) -> dict:
    return worker(True).call("inspect_module", {"source": template(name), "dtype": dtype, "shapes": shapes,
                                       "verify_shapes": []}, 300)


def first_valid_params(name: str, dtype: str, shape: dict, target: str, extra: dict | None = None) -> dict:
    """The first point of the template's default space that meets its constraints for `target`."""
    from kt_cli.recipe.space import SearchSpace, compile_constraint, constraint_env, parse_param

    info = inspect_module(name, dtype, [shape])
    spec = target_spec(target)
    params = [parse_param(k, v, k) for k, v in info["space"].items() if not isinstance(v, dict)]
    names = {p.name for p in params} | set(shape) | set(spec.properties) | {"dtype_bytes"}
    space = SearchSpace(tuple(params), tuple(compile_constraint(c, "c", names) for c in info["constraints"]))
    from kt_cli.recipe.parse import DTYPES

    env_of = lambda point: constraint_env({**point, **(extra or {})}, shape, spec.properties, DTYPES[dtype])  # noqa: E731
    point = next(space.valid_points(env_of), None)
    if point is not None:
        return {**point, **(extra or {})}
    raise AssertionError(f"no valid point of {name}'s space for {target} {shape}")


def verify(name: str, dtype: str, params: dict, shapes: list | None = None) -> dict:
    """Interpreter verification (raises WorkerFailure(kind='wrong') on a wrong result)."""
    from kt_cli.evaluate.requests import split_params

    kernel_params, _ = split_params(params, ("num_warps", "num_stages", "num_ctas", "maxnreg", "waves_per_eu",
                                             "matrix_instr_nonkdim", "kpack"))
    shapes = shapes or inspect_module(name, dtype, [])["verify_shapes"]
    return verify_source(template(name), kernel_params, shapes, dtype)


def compile_for(name: str, target: str, shape: dict, dtype: str, params: dict) -> dict:
    """Cross-compile for `target` (no GPU): resources and the static estimate."""
    source = template(name)
    candidate = Candidate(source.path, params, target, shape, dtype, "estimated")
    return worker(False).call("compile", {"source": source, "candidate": candidate,
                                          "target": target_spec(target)}, 600)


def check_static_gluon_point(art, kernel: str, threads: int) -> None:
    """In the static-mode artifact `art` (NAME.kt) of a two-point space (GLUON 0 and 1): the Gluon point
    was cross-compiled (its resources recorded) and recorded `interpreter`, naming `kernel`, since the
    CPU interpreter cannot run a Gluon kernel; the other point won, verified."""
    import json

    trials = {t["params"]["GLUON"]: t for t in map(json.loads, (art / "trials.jsonl").read_text().splitlines())}
    gluon, plain = trials[1], trials[0]
    assert gluon["failure_kind"] == "interpreter" and gluon["value"] is None
    assert kernel in gluon["message"] and "interpreter" in gluon["message"]
    assert gluon["resources"]["threads"] == threads and gluon["resources"]["shared_bytes"] > 0
    assert gluon["resources"]["spill_bytes"] == 0
    assert plain["failure_kind"] == "ok"
    (best,) = json.loads((art / "manifest.json").read_text())["results"]
    assert best["mode"] == "estimated" and best["params"]["GLUON"] == 0
