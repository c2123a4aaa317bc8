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
        return grid_sampler({p.name: list(p.all_values()) for p in space.params}, seed)
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


def grid_sampler(grid: dict, seed: int):
    """Optuna's GridSampler, except that a trial kt enqueued (a seed point, a retry) may end while one
    grid point is left: Optuna's own reads that trial's grid id, which an enqueued trial lacks, and
    raised KeyError('grid_id') out of the study (seen in CI with a module's SEEDS and sampler = "grid")."""
    import optuna

    class GridSampler(optuna.samplers.GridSampler):
        def after_trial(self, study, trial, state, values) -> None:
            if "grid_id" in study._storage.get_trial_system_attrs(trial._trial_id):
                super().after_trial(study, trial, state, values)
            elif not self._get_unvisited_grid_ids(study):
                study.stop()

    return GridSampler(grid, seed=seed)
