"""What each study searches: the targets of a run (measured on a present device, or estimated), the
space of a (target, problem) with its constraints, and the study's name in the storage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from kt_cli import plugins
from kt_cli.errors import BadInput
from kt_cli.recipe.parse import Recipe
from kt_cli.recipe.space import SearchSpace, compile_constraint, parse_param
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


def plan_targets(recipe: Recipe, requested: tuple[str, ...]) -> list[TargetPlan]:
    """--target wins; else the GPUs present (measured); else the recipe's targets (estimated)."""
    present = {d.target: d for d in plugins.devices()}
    if requested:
        names = list(dict.fromkeys(requested))
        where = "--target"
    elif present:
        names = list(present)
        where = "detected device"
    else:
        names = list(recipe.targets)
        where = recipe.where("targets.names")
        if not names:
            raise BadInput(f"{recipe.path}: targets.names: no GPU is present and the recipe names no target; add "
                           f"[targets] names = [\"{next(iter(plugins.targets()), 'vendor:arch')}\"] or pass --target")
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
    key_root = "search.space" if recipe.search.space else f"{source_name} SPACE"
    vendors = set(plugins.vendors())
    all_options = {opt for s in plugins.targets().values() for opt in s.launch_options}
    params = []
    for name, value in raw.items():
        if name in vendors:
            if not isinstance(value, dict):
                raise BadInput(f"{recipe.path}: {key_root}.{name}: must be a table of {name}-only parameters")
            if name != spec.vendor:
                continue
            for sub, subvalue in value.items():
                where = f"{recipe.path}: {key_root}.{name}.{sub}"
                if sub in all_options and sub not in spec.launch_options:
                    raise BadInput(f"{where}: {sub!r} is not a launch option of {name} targets; "
                                   f"{name} takes: {', '.join(spec.launch_options)}")
                params.append(parse_param(sub, subvalue, where))
            continue
        where = f"{recipe.path}: {key_root}.{name}"
        if name in all_options and not all(name in s.launch_options for s in plugins.targets().values()):
            owners = sorted({s.vendor for s in plugins.targets().values() if name in s.launch_options})
            raise BadInput(f"{where}: {name!r} is a launch option of {', '.join(owners)} only; move it to "
                           f"[search.space.{owners[0]}]")
        params.append(parse_param(name, value, where))
    if not params:
        raise BadInput(f"{recipe.path}: search.space: empty parameter space; add at least one parameter")
    names = {p.name for p in params} | shape_names | set(spec.properties) | {"dtype_bytes"}
    constraints = []
    for text in default_constraints:  # the kernel's own constraints, where the space has their names
        try:
            constraints.append(compile_constraint(text, f"{source_name} CONSTRAINTS", names))
        except BadInput:
            if not recipe.search.space:
                raise
    constraints += [compile_constraint(t, f"{recipe.path}: search.constraints[{i}]", names)
                    for i, t in enumerate(recipe.search.constraints)]
    return SearchSpace(tuple(params), tuple(constraints))


def default_storage(recipe: Recipe, out_dir: Path) -> str:
    out_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(out_dir / f'{recipe.name}.study.db').resolve()}"


def study_name(recipe: Recipe, plan: TargetPlan, shape: dict, source_hash: str) -> str:
    where = plan.device.name if plan.device is not None else "static"
    return f"{recipe.name}|{source_hash[:12]}|{plan.spec.name}|{where}|{plan.mode}|{recipe.problem.dtype}|{shape_key(shape)}"
