"""The Optuna sampler a recipe's `search.sampler` names."""

from __future__ import annotations

from kt_cli.errors import BadInput, EnvironmentProblem
from kt_cli.recipe.space import ENUMERATION_LIMIT, SearchSpace

STARTUP_TRIALS = 8  # TPE's random draws before it models; the driver draws them among valid points


def check_sampler_fits(name: str, space: SearchSpace, where: str) -> None:
    """The grid sampler lists every point of the space up front: refuse a space too large to list."""
    if name == "grid" and space.size() > ENUMERATION_LIMIT:
        raise BadInput(f"{where}: the grid sampler lists every point, and this space has {space.size()} "
                       f"(at most {ENUMERATION_LIMIT}); use sampler = \"tpe\" or \"random\", or shrink the space")


def make_sampler(name: str, seed: int, space: SearchSpace, parallel: bool = False):
    import warnings

    import optuna

    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    warnings.filterwarnings("ignore", category=FutureWarning, module="optuna")
    if name == "tpe":
        # constant_liar: points in flight count as bad, so parallel asks do not pile onto one region
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=STARTUP_TRIALS, multivariate=True, group=True,
                                          constant_liar=parallel)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "grid":
        return optuna.samplers.GridSampler({p.name: list(p.all_values()) for p in space.params}, seed=seed)
    if name == "cmaes":
        try:
            import cmaes  # noqa: F401  (only checks it is installed)
        except ImportError:
            raise EnvironmentProblem("search.sampler = \"cmaes\" needs the cmaes package: pip install cmaes") from None
        return optuna.samplers.CmaEsSampler(seed=seed)
    if name == "gp":
        try:
            import scipy  # noqa: F401
        except ImportError:
            raise EnvironmentProblem("search.sampler = \"gp\" needs scipy: pip install scipy") from None
        return optuna.samplers.GPSampler(seed=seed)
    raise ValueError(name)
