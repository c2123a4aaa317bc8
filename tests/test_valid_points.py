"""The repaired sampler's proposals (kt_cli/search/valid_points.py): a point that breaks a constraint
or was already proposed becomes the nearest valid point not yet proposed."""

from __future__ import annotations

import random

from kt_cli.recipe.space import NUMBER, STRING, Param, SearchSpace, compile_constraint, feasible_points
from kt_cli.search.valid_points import ValidPoints


def _space(constraints: list[str]) -> SearchSpace:
    params = (Param("BLOCK", values=(16, 32, 64, 128, 256)), Param("warps", values=(1, 2, 4, 8)),
              Param("order", values=("row", "col")))
    names = {"BLOCK": NUMBER, "warps": NUMBER, "order": STRING, "N": NUMBER}
    return SearchSpace(params, tuple(compile_constraint(t, "c", names) for t in constraints))


def _valid(constraints: list[str]) -> ValidPoints:
    space = _space(constraints)
    return ValidPoints(space, feasible_points(space, {"N": 1}, {}, 2, "recipe.toml: search.space"))


def test_a_point_that_breaks_a_constraint_becomes_the_nearest_valid_one():
    valid = _valid(["BLOCK * warps <= 128"])
    rng = random.Random(0)
    # 256 x 8 breaks it; each knob's span counts 1: 16 x 8 is 4 of 4 block steps away (1.0), 32 x 4 is
    # 3 of 4 block steps and 1 of 3 warp steps (1.08), 128 x 1 is 1 of 4 and 3 of 3 (1.25): 16 x 8, its
    # order kept
    assert valid.nearest({"BLOCK": 256, "warps": 8, "order": "col"}, rng) == {"BLOCK": 16, "warps": 8, "order": "col"}


def test_a_point_already_proposed_moves_to_its_nearest_free_neighbour_and_none_repeats():
    valid = _valid(["BLOCK * warps <= 128"])
    rng = random.Random(1)
    first = valid.nearest({"BLOCK": 64, "warps": 2, "order": "row"}, rng)
    assert first == {"BLOCK": 64, "warps": 2, "order": "row"}  # valid and new: as proposed
    second = valid.nearest({"BLOCK": 64, "warps": 2, "order": "row"}, rng)
    assert second != first and sum(second[k] != first[k] for k in first) == 1  # one step away
    seen = {tuple(first.values()), tuple(second.values())}
    for _ in range(len(valid) - 2):  # every valid point once, whatever is proposed
        seen.add(tuple(valid.nearest({"BLOCK": 256, "warps": 8, "order": "row"}, rng).values()))
    assert len(seen) == len(valid)
    again = valid.nearest({"BLOCK": 16, "warps": 1, "order": "row"}, rng)  # all proposed: the nearest valid one
    assert again == {"BLOCK": 16, "warps": 1, "order": "row"}


def test_draws_before_the_sampler_models_are_valid_and_distinct_until_all_are_taken():
    valid = _valid(["BLOCK * warps <= 64", "order == 'row' or warps == 1"])
    rng = random.Random(2)
    drawn = [tuple(valid.draw(rng).values()) for _ in range(len(valid))]
    assert len(set(drawn)) == len(valid)
    assert all(b * w <= 64 and (o == "row" or w == 1) for b, w, o in drawn)
    assert tuple(valid.draw(rng).values()) in set(drawn)  # then any valid point


def test_a_process_never_proposes_a_point_another_process_sharing_the_study_has_drawn():
    """Two processes sharing a study each wrap their own sampler; one's proposals never repeat what the
    other drew (answered as duplicates, they cost a trial each and grew as the two TPEs converged)."""
    import optuna

    from kt_cli.search.sampler import make_sampler
    from kt_cli.search.valid_points import repairing

    valid_a, valid_b = _valid(["BLOCK * warps <= 128"]), _valid(["BLOCK * warps <= 128"])
    space = _space(["BLOCK * warps <= 128"])
    samplers = [repairing(make_sampler("tpe", seed, space), valid, space, seed)
                for seed, valid in ((0, valid_a), (1, valid_b))]
    storage = optuna.storages.InMemoryStorage()
    studies = [optuna.create_study(study_name="s", storage=storage, sampler=s, load_if_exists=True) for s in samplers]

    def objective(trial):
        point = {p.name: p.suggest(trial) for p in space.params}
        return point["BLOCK"] * point["warps"] + (point["order"] == "col")

    for _ in range(len(valid_a) // 2):
        for study in studies:  # the two processes take turns
            study.optimize(objective, n_trials=1)
    points = [tuple(sorted(t.params.items())) for t in studies[0].get_trials()]
    assert len(points) == len(valid_a) // 2 * 2 and len(set(points)) == len(points)
