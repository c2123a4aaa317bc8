"""Recipe TOML -> frozen dataclasses. Every error names the file and the key path."""

from __future__ import annotations

import hashlib
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from kt_cli.errors import BadInput

DTYPES = {"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3": 1}
SAMPLERS = ("tpe", "random", "grid", "cmaes", "gp")


@dataclass(frozen=True)
class Problem:
    dtype: str
    shapes: tuple[dict, ...]
    verify_shapes: tuple[dict, ...] = ()
    tolerance: float | dict | None = None  # relative, or {rtol, atol, why} (kt_cli.evaluate.verify)

    @property
    def dtype_bytes(self) -> int:
        return DTYPES[self.dtype]


@dataclass(frozen=True)
class Search:
    trials: int = 24
    sampler: str = "tpe"
    seed: int = 0
    timeout: float = 120.0
    space: dict = field(default_factory=dict)  # raw tables; kt_cli.recipe.space parses them per target
    constraints: tuple[str, ...] = ()


@dataclass(frozen=True)
class Recipe:
    path: Path
    text_hash: str
    kernel: dict  # generator name under "generator"; the rest is the generator's to check
    problem: Problem
    search: Search
    targets: tuple[str, ...]
    output_dir: Path
    name: str

    @property
    def generator(self) -> str:
        return self.kernel["generator"]

    def where(self, key: str) -> str:
        return f"{self.path}: {key}"


_SECTIONS = {
    "kernel": None,  # open: the generator validates its own keys
    "problem": {"dtype", "shapes", "verify_shapes", "tolerance"},
    "search": {"trials", "sampler", "seed", "timeout", "space", "constraints"},
    "targets": {"names"},
    "output": {"dir", "name"},
}


class _Reader:
    def __init__(self, path: Path, data: dict):
        self.path, self.data = path, data

    def fail(self, key: str, what: str) -> BadInput:
        return BadInput(f"{self.path}: {key}: {what}")

    def get(self, key: str, kinds: tuple, default: Any = ..., what: str = "") -> Any:
        node: Any = self.data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                if default is ...:
                    raise self.fail(key, f"missing; add it ({what})" if what else "missing; add it")
                return default
            node = node[part]
        if not isinstance(node, kinds) or (isinstance(node, bool) and bool not in kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise self.fail(key, f"must be {names}, not {type(node).__name__} ({node!r})")
        return node

    def shapes(self, key: str, required: bool) -> tuple[dict, ...]:
        shapes = self.get(key, (list,), ... if required else [], "a list of tables like {M = 1024, N = 1024}")
        if required and not shapes:
            raise self.fail(key, "empty; give at least one shape like {M = 1024, N = 1024}")
        out = []
        for i, shape in enumerate(shapes):
            if not isinstance(shape, dict) or not shape:
                raise self.fail(f"{key}[{i}]", "must be a table of sizes like {M = 1024, N = 1024}")
            for dim, size in shape.items():
                if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                    raise self.fail(f"{key}[{i}].{dim}", f"must be a positive integer, not {size!r}")
            out.append(dict(shape))
        return tuple(out)


def _tolerance(r: "_Reader", value):
    """problem.tolerance: a relative tolerance, or a table {rtol, atol, why}; finite and positive (atol
    may be 0), and a table says why the kernel needs a bound looser than assert_close's."""
    if value is None:
        return None
    fix = 'e.g. tolerance = {rtol = 2e-2, atol = 1e-3, why = "fp32 accumulation over K"}'
    if not isinstance(value, dict):
        if not (math.isfinite(value) and value > 0):
            raise r.fail("problem.tolerance", f"must be a finite positive number, not {value!r}; {fix}")
        return float(value)
    unknown = set(value) - {"rtol", "atol", "rms", "why"}
    if unknown:
        raise r.fail(f"problem.tolerance.{sorted(unknown)[0]}", f"unknown key; the table takes rtol, atol, rms, why ({fix})")
    for key in ("rtol", "atol", "rms"):
        number = value.get(key, 0.0)
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) or number < 0:
            raise r.fail(f"problem.tolerance.{key}", f"must be a finite number >= 0, not {number!r}; {fix}")
    if not isinstance(value.get("why"), str) or not value["why"].strip():
        raise r.fail("problem.tolerance.why", f"missing; say why this kernel needs its tolerance ({fix})")
    return {**{k: float(value[k]) for k in ("rtol", "atol", "rms") if k in value}, "why": value["why"]}


def load_recipe(path: str | Path) -> Recipe:
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{path}: recipe file not found; check the path")
    raw = path.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: not valid TOML: {exc}") from None
    for section, value in data.items():
        if section not in _SECTIONS:
            raise BadInput(f"{path}: unknown section [{section}]; must be one of: {', '.join(_SECTIONS)}")
        if not isinstance(value, dict):
            raise BadInput(f"{path}: {section}: must be a table [{section}]")
        allowed = _SECTIONS[section]
        for key in value:
            if allowed is not None and key not in allowed:
                raise BadInput(f"{path}: {section}.{key}: unknown key; [{section}] takes: {', '.join(sorted(allowed))}")
    r = _Reader(path, data)

    r.get("kernel.generator", (str,), what='e.g. generator = "templates"')
    dtype = r.get("problem.dtype", (str,), "float32")
    if dtype not in DTYPES:
        raise r.fail("problem.dtype", f"unknown dtype {dtype!r}; must be one of: {', '.join(DTYPES)}")
    tolerance = _tolerance(r, r.get("problem.tolerance", (float, int, dict), None))
    problem = Problem(dtype, r.shapes("problem.shapes", True), r.shapes("problem.verify_shapes", False), tolerance)

    trials = r.get("search.trials", (int,), 24)
    if trials < 1:
        raise r.fail("search.trials", f"must be at least 1, not {trials}")
    sampler = r.get("search.sampler", (str,), "tpe")
    if sampler not in SAMPLERS:
        raise r.fail("search.sampler", f"unknown sampler {sampler!r}; must be one of: {', '.join(SAMPLERS)}")
    timeout = r.get("search.timeout", (int, float), 120.0)
    if timeout <= 0:
        raise r.fail("search.timeout", "must be a positive number of seconds")
    constraints = r.get("search.constraints", (list,), [])
    for i, c in enumerate(constraints):
        if not isinstance(c, str):
            raise r.fail(f"search.constraints[{i}]", "must be a string expression")
    search = Search(trials, sampler, r.get("search.seed", (int,), 0), float(timeout),
                    r.get("search.space", (dict,), {}), tuple(constraints))

    targets = r.get("targets.names", (list,), [])
    for i, t in enumerate(targets):
        if not isinstance(t, str) or ":" not in t:
            raise r.fail(f"targets.names[{i}]", f"must be a target name 'vendor:arch' (kt devices lists them), not {t!r}")
    default_name = data["kernel"].get("name", path.stem)
    name = r.get("output.name", (str,), default_name if isinstance(default_name, str) else path.stem)
    if not name or "/" in name or name.startswith("."):
        raise r.fail("output.name", f"{name!r} is not a plain file name")
    out_dir = Path(r.get("output.dir", (str,), "artifacts"))
    return Recipe(path, hashlib.sha256(raw).hexdigest(), dict(data["kernel"]), problem, search,
                  tuple(targets), out_dir, name)
