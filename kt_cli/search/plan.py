"""What each study searches: the targets of a run (measured on a present device, or estimated), the
space of a (target, problem) with its constraints, and the study's name in the storage."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from kt_cli import plugins
from kt_cli.errors import BadInput
from kt_cli.recipe import limits
from kt_cli.recipe.parse import Recipe
from kt_cli.recipe.space import NUMBER, SearchSpace, compile_constraint, parse_param
from kt_cli.types import TargetSpec, shape_key

@dataclass(frozen=True)
class TargetPlan:
    spec: TargetSpec
    mode: str  # "measured" or "estimated"
    device: object = None

    @property
    def peaks(self) -> dict:
        if self.device is not None:
            return plugins.vendor(self.spec.vendor).device_peaks(self.device) or self.spec.peaks
        return self.spec.peaks


def plan_targets(recipe: Recipe, requested: tuple[str, ...], devices: list | None = None) -> list[TargetPlan]:
    """--target wins; else the GPUs present (measured); else the recipe's targets (estimated).
    `devices`: those present, when detected already (else they are detected here)."""
    # A target's first device: the one an unpinned device worker selects (kt_cli.evaluate.requests._present)
    # and the one a run measures on. Taking the last (a dict built over all of them) recorded a one-process
    # run on a 4x H100 host as tuned on device 3 while every candidate ran on device 0, and its winners
    # were then paired with their reference on device 3 against inputs the judge held on device 0: an
    # illegal memory access (benchmarks/results/s26/x4).
    present: dict = {}
    for d in plugins.devices() if devices is None else devices:
        present.setdefault(d.target, d)
    if requested:
        names = list(dict.fromkeys(requested))
        where = "--target"
    elif present:
        names = list(present)
        where = "detected device"
    else:
        names = list(dict.fromkeys(recipe.targets))
        where = recipe.where("targets.names")
        if not names:
            raise BadInput(f"{recipe.path}: targets.names: no GPU is present and the recipe names no target; add "
                           f"[targets] names = [\"{next(iter(plugins.targets()), 'vendor:arch')}\"] or pass --target")
    studies = len(names) * len(recipe.problem.shapes)
    if studies > limits.STUDIES_MAX:
        raise BadInput(f"{where}: {len(names)} targets x {len(recipe.problem.shapes)} problem shapes are {studies} "
                       f"studies; at most {limits.STUDIES_MAX} in one run: tune fewer targets or shapes per run")
    plans = []
    for name in names:
        spec = plugins.target(name, where)
        device = present.get(name)
        plans.append(TargetPlan(spec, "measured" if device else "estimated", device))
    return plans


def build_space(recipe: Recipe, defaults: dict, default_constraints: list, spec: TargetSpec,
                shape_names: set[str]) -> SearchSpace:
    """The recipe's space (or the kernel's own), with this vendor's sub-table and no other vendor's."""
    raw = recipe.search.space or defaults
    source_name = recipe.kernel.get("name", "kernel")
    key_root = space_key(recipe)
    params = _space_params(raw, key_root, spec)
    if not params:
        raise BadInput(f"{recipe.path}: search.space: empty parameter space; add at least one parameter")
    fixed = shape_names | set(spec.properties) | {"dtype_bytes"}
    taken = {}
    for param, where in params:
        if param.name in fixed:
            raise BadInput(f"{where}: {param.name!r} is also a problem size or a property of {spec.name}, which "
                           "constraints see under that name; rename the knob")
        if param.name in taken:
            raise BadInput(f"{where}: {param.name!r} is also set at {taken[param.name]}; set each knob once")
        taken[param.name] = where.split(": ")[-1]
    names = {**dict.fromkeys(fixed, NUMBER), **{p.name: p.kind for p, _ in params}}
    constraints = []
    for text in default_constraints:  # the kernel's own constraints, where the space has their names
        try:
            constraints.append(compile_constraint(text, f"{source_name} CONSTRAINTS", names))
        except BadInput:
            if not recipe.search.space:
                raise
    constraints += [compile_constraint(t, f"{recipe.path}: search.constraints[{i}]", names)
                    for i, t in enumerate(recipe.search.constraints)]
    return SearchSpace(tuple(p for p, _ in params), tuple(constraints))


def space_key(recipe: Recipe) -> str:
    """Where the space of a run is written: the recipe's [search.space], else the kernel's SPACE."""
    return f"{recipe.path}: " + ("search.space" if recipe.search.space else f"{recipe.kernel.get('name', 'kernel')} SPACE")


def _space_params(raw: dict, key_root: str, spec: TargetSpec) -> list:
    """(Param, where) for every knob of `raw` this target sees: the shared ones and its vendor's table."""
    vendors = set(plugins.vendors())
    specs = plugins.targets().values()
    all_options = {opt for s in specs for opt in s.launch_options}
    params = []
    for name, value in raw.items():
        if name in vendors:
            if not isinstance(value, dict):
                raise BadInput(f"{key_root}.{name}: must be a table of {name}-only parameters")
            if name != spec.vendor:
                continue
            for sub, subvalue in value.items():
                where = f"{key_root}.{name}.{sub}"
                if sub in all_options and sub not in spec.launch_options:
                    raise BadInput(f"{where}: {sub!r} is not a launch option of {name} targets; "
                                   f"{name} takes: {', '.join(spec.launch_options)}")
                params.append((parse_param(sub, subvalue, where), where))
            continue
        where = f"{key_root}.{name}"
        if name in all_options and not all(name in s.launch_options for s in specs):
            owners = sorted({s.vendor for s in specs if name in s.launch_options})
            raise BadInput(f"{where}: {name!r} is a launch option of {', '.join(owners)} only; move it to "
                           f"[search.space.{owners[0]}]")
        params.append((parse_param(name, value, where), where))
    return params


def check_kernel_knobs(space: SearchSpace, spec: TargetSpec, probe: dict, where: str) -> None:
    """Every knob of `space` is a launch option of `spec` or something the kernel takes (its SPACE, an
    argument of one of its @triton.jit functions, or a key its launch reads), and its launch reads no
    knob the space lacks. `probe` is what kt_cli.kernel.knobs_read found in a worker."""
    knobs = [p.name for p in space.params if p.name not in spec.launch_options]
    options = ", ".join(spec.launch_options)
    if probe.get("missing") is not None:
        missing = probe["missing"]
        near = difflib.get_close_matches(missing, knobs, n=1)
        hint = f" ({near[0]!r} is set: a misspelling?)" if near else ""
        raise BadInput(f"{where}: the kernel's launch reads params[{missing!r}], which the space does not set"
                       f"{hint}; add {missing} = [...] (the space sets {', '.join(knobs) or 'no kernel knob'})")
    if not probe.get("completed"):
        return  # the launch stopped early for a reason of its own: what it did not read says nothing
    known = set(probe["known"]) | set(probe["read"])
    for name in knobs:
        if name not in known:
            near = difflib.get_close_matches(name, [*spec.launch_options, *sorted(known)], n=1)
            hint = f"did you mean {near[0]}? " if near else ""
            raise BadInput(f"{where}.{name}: not a knob of the kernel (its launch never reads it and no "
                           f"@triton.jit function takes it) nor a launch option of {spec.name} ({options}); "
                           f"{hint}fix or remove it")


def default_storage(recipe: Recipe, out_dir: Path) -> str:
    """SQLite next to the artifact; its directory is made only when the storage is opened
    (make_storage_dir), so a run refused as bad input leaves nothing behind."""
    return f"sqlite:///{(out_dir / f'{recipe.name}.study.db').resolve()}"


def _storage_file(storage_url: str) -> Path | None:
    """The file of an SQLite or journal storage; None for a database server's (or SQLite in memory)."""
    found = re.match(r"sqlite(\+\w+)?:///(.+)", storage_url)
    path = found.group(2) if found else None if "://" in storage_url else storage_url
    return Path(path) if path and path != ":memory:" else None


def make_storage_dir(storage_url: str) -> None:
    """The directory of an SQLite study file or a journal file, made just before the storage is opened."""
    path = _storage_file(storage_url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


def new_storage(storage_url: str) -> bool:
    """Whether the storage is a file that does not exist yet: every study opened there is new."""
    path = _storage_file(storage_url)
    return path is not None and not path.exists()


def study_name(recipe: Recipe, plan: TargetPlan, shape: dict, source_hash: str) -> str:
    where = plan.device.name if plan.device is not None else "static"
    return f"{recipe.name}|{source_hash[:12]}|{plan.spec.name}|{where}|{plan.mode}|{recipe.problem.dtype}|{shape_key(shape)}"
