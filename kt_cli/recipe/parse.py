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
from kt_cli.recipe import limits
from kt_cli.recipe.constraints import parse_expression
from kt_cli.recipe.limits import shown

DTYPES = {"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3": 1}
SAMPLERS = ("tpe", "random", "grid", "cmaes", "gp")
DEFAULT_OUTPUT_DIR = "artifacts"  # relative to where kt runs


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
    compile_timeout: float | None = None  # None: set from the compile times seen (evaluate.early_exits)
    # per thread; a candidate spilling more ends as `spills`. Tuned winners recorded in benchmarks/results
    # spill up to 112 B (attention); pathological points (wide blocks on one or two warps) 600 B to KBs.
    max_spill_bytes: int = 256
    space: dict = field(default_factory=dict)  # raw tables; kt_cli.recipe.space parses them per target
    constraints: tuple[str, ...] = ()
    shortlist: int = 8  # static mode: the best configs by estimate kept for `kt finalize` to time


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
    "search": {"trials", "sampler", "seed", "timeout", "compile_timeout", "max_spill_bytes", "space", "constraints",
               "shortlist"},
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
        """A list of shapes, each a table of positive sizes (a shape may leave out a size another has:
        attention's CAUSAL)."""
        shapes = self.get(key, (list,), ... if required else [], "a list of tables like {M = 1024, N = 1024}")
        if required and not shapes:
            raise self.fail(key, "empty; give at least one shape like {M = 1024, N = 1024}")
        most = limits.SHAPES_MAX if required else limits.VERIFY_SHAPES_MAX
        limits.count(shapes, f"{self.path}: {key}", most, "shapes", "split the recipe into several recipes")
        out = []
        for i, shape in enumerate(shapes):
            if not isinstance(shape, dict) or not shape:
                raise self.fail(f"{key}[{i}]", "must be a table of sizes like {M = 1024, N = 1024}")
            for dim, size in shape.items():
                if not dim.isidentifier() or dim.startswith("__"):
                    raise self.fail(f"{key}[{i}]", f"{shown(dim)} is not a size name; name sizes like M, N, K")
                if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                    raise self.fail(f"{key}[{i}].{dim}", f"must be a positive integer, not {shown(size)}")
                limits.size(size, f"{self.path}: {key}[{i}].{dim}")
            out.append(dict(shape))
        return tuple(out)


def _refuse_control_characters(path: Path, node, key: str = "") -> None:
    """No key or string anywhere in the recipe holds a NUL or another control character: they end up in
    file names, study names and messages."""
    stack = [(key, node)]
    while stack:
        key, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for name, value in items:
            full = f"{key}[{name}]" if isinstance(node, list) else f"{key}.{name}" if key else name
            if isinstance(name, str):
                limits.no_control_characters(name, f"{path}: {shown(full)}", "the key")
            if isinstance(value, str):
                limits.no_control_characters(value, f"{path}: {full}", "the string")
            stack.append((full, value))


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


def _read(path: Path) -> tuple[bytes, dict]:
    """The recipe's bytes and its TOML, refused past RECIPE_BYTES_MAX (before parsing) or when a key or
    a string in it holds a control character."""
    try:
        if not path.is_file():
            raise BadInput(f"{path}: recipe file not found (or not a regular file); check the path")
        if path.stat().st_size > limits.RECIPE_BYTES_MAX:
            raise BadInput(f"{path}: the recipe is {path.stat().st_size} bytes; at most {limits.RECIPE_BYTES_MAX} "
                           "(1 MiB): split it into several recipes")
        raw = path.read_bytes()
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, no permission
        raise BadInput(f"{path}: cannot read the recipe: {getattr(exc, 'strerror', None) or exc}; "
                       "check the path") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise BadInput(f"{path}: not valid TOML: nested too deeply; a recipe nests a few tables deep") from None
    _refuse_control_characters(path, data)
    for section, value in data.items():
        if section not in _SECTIONS:
            raise BadInput(f"{path}: unknown section [{section}]; must be one of: {', '.join(_SECTIONS)}")
        if not isinstance(value, dict):
            raise BadInput(f"{path}: {section}: must be a table [{section}]")
        allowed = _SECTIONS[section]
        for key in value:
            if allowed is not None and key not in allowed:
                raise BadInput(f"{path}: {section}.{key}: unknown key; [{section}] takes: {', '.join(sorted(allowed))}")
    return raw, data


def _search(r: _Reader) -> Search:
    trials = limits.trials(r.get("search.trials", (int,), 24), f"{r.path}: search.trials")
    sampler = r.get("search.sampler", (str,), "tpe")
    if sampler not in SAMPLERS:
        raise r.fail("search.sampler", f"unknown sampler {shown(sampler)}; must be one of: {', '.join(SAMPLERS)}")
    timeout = limits.seconds(r.get("search.timeout", (int, float), 120.0), f"{r.path}: search.timeout")
    seed = limits.seed(r.get("search.seed", (int,), 0), f"{r.path}: search.seed")
    compile_timeout = _compile_timeout(r, timeout)
    max_spill = limits.spill_bytes(r.get("search.max_spill_bytes", (int,), Search.max_spill_bytes),
                                   f"{r.path}: search.max_spill_bytes")
    shortlist = limits.shortlist(r.get("search.shortlist", (int,), Search.shortlist), f"{r.path}: search.shortlist")
    constraints = r.get("search.constraints", (list,), [])
    limits.count(constraints, f"{r.path}: search.constraints", 64, "constraints", "merge or drop some")
    for i, c in enumerate(constraints):
        if not isinstance(c, str):
            raise r.fail(f"search.constraints[{i}]", "must be a string expression")
        parse_expression(c, f"{r.path}: search.constraints[{i}]")
    space = r.get("search.space", (dict,), {})
    if "space" in r.data.get("search", {}) and not space:
        raise r.fail("search.space", "an empty table; list the knobs to search (e.g. BLOCK = [256, 512]), or "
                                     "remove [search.space] to search the kernel's own space")
    return Search(trials, sampler, seed, timeout, compile_timeout, max_spill, space, tuple(constraints), shortlist)


def _compile_timeout(r: _Reader, timeout: float) -> float | None:
    """search.compile_timeout: seconds, at most the per-candidate search.timeout."""
    value = r.get("search.compile_timeout", (int, float), None)
    if value is None:
        return None
    value = limits.seconds(value, f"{r.path}: search.compile_timeout", "seconds one candidate's compile may take")
    if value > timeout:
        raise r.fail("search.compile_timeout", f"{value:g} s is more than search.timeout ({timeout:g} s), which "
                                               "bounds the whole candidate; lower it or raise search.timeout")
    return value


def _output_name(r: _Reader, data: dict) -> str:
    default_name = data["kernel"].get("name", r.path.stem)
    name = r.get("output.name", (str,), default_name if isinstance(default_name, str) else r.path.stem)
    if not name or any(c in name for c in "/\\") or name.startswith(".") \
            or len(name) > limits.NAME_CHARS_MAX:
        raise r.fail("output.name", f"{shown(name)} is not a plain file name (no / or \\, not starting with ., "
                                    f"at most {limits.NAME_CHARS_MAX} characters); set [output] name = \"softmax\"")
    return name


def load_recipe(path: str | Path) -> Recipe:
    path = Path(path)
    raw, data = _read(path)
    r = _Reader(path, data)
    r.get("kernel.generator", (str,), what='e.g. generator = "templates"')
    dtype = r.get("problem.dtype", (str,), "float32")
    if dtype not in DTYPES:
        raise r.fail("problem.dtype", f"unknown dtype {shown(dtype)}; must be one of: {', '.join(DTYPES)}")
    tolerance = _tolerance(r, r.get("problem.tolerance", (float, int, dict), None))
    problem = Problem(dtype, r.shapes("problem.shapes", True), r.shapes("problem.verify_shapes", False), tolerance)
    search = _search(r)
    targets = r.get("targets.names", (list,), [])
    for i, t in enumerate(targets):
        if not isinstance(t, str) or ":" not in t:
            raise r.fail(f"targets.names[{i}]", f"must be a target name 'vendor:arch' (kt devices lists them), "
                                                f"not {shown(t)}")
    name = _output_name(r, data)
    out_dir = Path(r.get("output.dir", (str,), DEFAULT_OUTPUT_DIR))
    return Recipe(path, hashlib.sha256(raw).hexdigest(), dict(data["kernel"]), problem, search,
                  tuple(targets), out_dir, name)
