"""A space's valid points: found knob by knob (a constraint checked once the knobs it names are set),
they are exactly the points a check of every point finds, in the same order."""

from __future__ import annotations

import itertools
import random

import pytest

from kt_cli.errors import BadInput
from kt_cli.recipe.space import (NUMBER, STRING, Param, SearchSpace, compile_constraint, constraint_env,
                                 feasible_points)

NAMES = ("A", "B", "C", "D", "M", "smem", "dtype_bytes")


def _space(constraints: list[str]) -> SearchSpace:
    params = (Param("A", values=(16, 32, 64, 128)), Param("B", values=(1, 2, 3)),
              Param("C", low=1, high=9, step=2), Param("D", values=("x", "y")))
    names = dict.fromkeys(NAMES, NUMBER) | {"D": STRING}
    return SearchSpace(params, tuple(compile_constraint(t, f"c{i}", names) for i, t in enumerate(constraints)))


@pytest.mark.parametrize("seed", range(6))
def test_the_valid_points_are_those_every_constraint_allows_in_the_spaces_order(seed):
    rng = random.Random(seed)
    pool = ["A * B <= smem", "C != 3 or D == 'y'", "B + C < 9", "M % A == 0", "A >= 32 or D == 'x'",
            "M > 100", "dtype_bytes * A * C <= 1024"]
    constraints = rng.sample(pool, rng.randint(1, len(pool)))
    space = _space(constraints)
    shape, properties = {"M": rng.choice([96, 128, 256])}, {"smem": rng.choice([64, 200])}
    every = [i for i, p in enumerate(space.points())
             if space.violated(constraint_env(p, shape, properties, 2)) is None]
    if not every:
        with pytest.raises(BadInput):
            feasible_points(space, shape, properties, 2, "recipe.toml: search.space")
        return
    assert feasible_points(space, shape, properties, 2, "recipe.toml: search.space") == every


def test_a_space_no_point_of_which_fits_names_the_constraint_refusing_most_with_its_count():
    space = _space(["B <= 3", "A > 1000"])  # the second refuses every one of the 4 * 3 * 5 * 2 points
    with pytest.raises(BadInput) as caught:
        feasible_points(space, {"M": 1}, {"smem": 1}, 2, "recipe.toml: search.space")
    assert "all 120 points violate" in str(caught.value) and "120 are rejected by" in str(caught.value)
    assert "'A > 1000'" in str(caught.value)


def test_points_and_indices_agree():
    space = _space([])
    names = [p.name for p in space.params]
    listed = [dict(zip(names, v)) for v in itertools.product(*(p.all_values() for p in space.params))]
    assert [space.point_at(i) for i in range(space.size())] == listed
