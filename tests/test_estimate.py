"""`kt estimate`: the cost model's estimate, terms and rank of given points of a recipe's space, cross-
compiled for nvidia:sm_90 on this CPU; a bad points file is one line naming the file, the line and the fix."""

import json

import pytest

from tests.helpers import SCALED_ADD, dsl_recipe, kt, one_error_line

SPACE = "BLOCK = [256, 512, 1024]\nnum_warps = [2, 4]"
TARGET = ["--target", "nvidia:sm_90"]


def test_each_point_gets_its_estimate_terms_and_rank_among_every_valid_point(write):
    recipe = dsl_recipe(write, space=SPACE)
    points = write("points.jsonl", '{"BLOCK": 1024, "num_warps": 4}\n\n'
                                   '{"BLOCK": 256, "num_warps": 2, "problem": {"N": 4096}}\n')
    result = kt("estimate", recipe, *TARGET, "--points", points, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["point"] for r in rows] == [f"{points}:1", f"{points}:3"]
    for row in rows:
        assert row["estimate"]["seconds"] > 0 and len(row["estimate"]) > 1  # the model's terms besides the time
        assert row["ranking"] == "all" and row["ranked_among"] == 6 and 1 <= row["rank"] <= 6
    # ranks follow the estimates
    fast, slow = sorted(rows, key=lambda r: r["estimate"]["seconds"])
    assert fast["rank"] <= slow["rank"]
    from kt_cli.commands.estimate import rank, terms

    assert rank(fast) == f"{fast['rank']} of 6 (all valid points)"  # as the table shows it
    assert terms(fast["estimate"]) and "seconds=" not in terms(fast["estimate"])


@pytest.mark.parametrize("text, says", [
    (None, "cannot be read"),
    ('{"BLOCK": 1024, "num_warps": 4}\n{"BLOCK": 10', "points.jsonl:2: not JSON"),
    ('[1024, 4]', "points.jsonl:1: must be a JSON object"),
    ('{"BLOCK": 1024, "num_warps": 4, "BLOK": 2}', "points.jsonl:1: 'BLOK' is not a knob of the space"),
    ('{"BLOCK": 1000, "num_warps": 4}', "points.jsonl:1: BLOCK=1000 is outside the space; BLOCK takes"),
    ('{"BLOCK": 1024}', "points.jsonl:1: sets no num_warps"),
    ('{"BLOCK": 1024, "num_warps": 4, "problem": {"N": 5}}', "points.jsonl:1: problem: {'N': 5} is not a problem"),
])
def test_a_bad_points_file_is_one_line_naming_the_file_and_line(write, tmp_path, text, says):
    recipe = dsl_recipe(write, SCALED_ADD, space=SPACE)
    points = tmp_path / "points.jsonl" if text is None else write("points.jsonl", text)
    result = kt("estimate", recipe, *TARGET, "--points", points)
    assert result.exit_code == 2
    assert says in one_error_line(result)


def test_an_unknown_target_is_one_line(write):
    result = kt("estimate", dsl_recipe(write, space=SPACE), "--target", "nvidia:sm_1")
    assert result.exit_code == 2 and "unknown target 'nvidia:sm_1'" in one_error_line(result)


def test_without_points_the_kernels_seeds_are_estimated(write):
    kernel = SCALED_ADD + '\nSEEDS = [{"BLOCK": 1024}, {"BLOCK": 3}]\n'  # the second is outside the space
    result = kt("estimate", dsl_recipe(write, kernel, space="BLOCK = [512, 1024]\nnum_warps = [4]"), *TARGET, "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert row["point"] == "kernel SEEDS[0]" and row["params"] == {"BLOCK": 1024, "num_warps": 4}
    assert row["ranked_among"] == 2 and row["estimate"]["seconds"] > 0
