"""The adversarial suite: every planted candidate of tests/cheats.py ends `wrong` or `rejected`, in
static mode (interpreter verification) and in measured mode on the fake CPU device (verification, the
launch watch and the timed-output check), judged each time by a worker that loads only the problem's
module, as generated code is (kt_cli.evaluate.isolated). The honest module beside them ends `ok`, so
the suite cannot pass by rejecting everything."""

import pytest

from tests.cheats import CHEATS, HONEST, OUTLIVES_ITS_ROUND, TIMED_CHEATS

SHAPE = {"M": 64, "N": 1000}
PARAMS = {"BLOCK": 512}
RECIPE = """
[kernel]
generator = "dsl"
file = "honest.py"
[problem]
dtype = "float32"
shapes = [{M = 64, N = 1000}]
[search]
trials = 1
timeout = 120
[search.space]
BLOCK = [512]
"""


def evaluate_all(tmp_path, target: str, modules: dict) -> dict:
    """{name: (failure kind, message)} of each module at SHAPE, one Evaluator, a module after another."""
    from kt_cli.kernel import KernelSource
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.search.plan import plan_targets
    from kt_cli.evaluate.evaluator import Evaluator

    (tmp_path / "honest.py").write_text(HONEST)
    (tmp_path / "r.toml").write_text(RECIPE)
    recipe = load_recipe(tmp_path / "r.toml")
    plan = plan_targets(recipe, (target,))[0]
    out = {}
    evaluator = None
    try:
        for name, text in modules.items():
            path = tmp_path / f"{name}.py"
            path.write_text(text)
            # judged by the honest module's problem, as a model's module is judged by its task's
            source = KernelSource(str(path), "dsl", name, problem_path=str(tmp_path / "honest.py"))
            if evaluator is None:
                evaluator = Evaluator(source, recipe, [], recipe.search.timeout)
            evaluator.use(source)
            try:
                evaluator.inspect_module([SHAPE])
            except Exception as exc:  # noqa: BLE001 - a module kt refuses to load is refused, with its reason
                out[name] = ("rejected" if "rejected" in str(exc) else "bad_input", str(exc))
                continue
            result = evaluator.evaluate(plan, SHAPE, PARAMS)
            out[name] = (result.failure_kind, result.message)
            print(f"{name:32} {result.failure_kind:9} {result.message[:150]}", flush=True)
    finally:
        if evaluator is not None:
            evaluator.close()
    return out


def assert_caught(verdicts: dict, at_least: int = 30) -> None:
    assert verdicts.pop("honest")[0] == "ok"
    assert verdicts.pop("honest_after_a_lasting_patch")[0] == "ok"  # nothing survives into another module
    # `invalid` is kt refusing to run a launch at all (here: one that computes on the data while kt
    # records its launches with shape-only tensors); it never reaches verification, let alone a win
    escaped = {name: v for name, v in verdicts.items() if v[0] not in ("wrong", "rejected", "invalid")}
    assert not escaped, escaped
    assert len(verdicts) >= at_least


def modules(part: int = 0, parts: int = 1) -> dict:
    """The honest module, every `parts`-th cheat from the `part`-th, the lasting patch and the honest
    module after it."""
    cheats = {name: CHEATS[name] for name in sorted(CHEATS)[part::parts]}
    return {"honest": HONEST, **cheats, "outlives_its_round": OUTLIVES_ITS_ROUND,
            "honest_after_a_lasting_patch": HONEST.replace("OUTPUTS", "# another module\nOUTPUTS")}


CPU_PARTS = 2  # halves of the suite judged side by side, each by its own Evaluator (CI has two cores)


def assert_all_parts_caught(tmp_path, target: str) -> None:
    """Every part of the suite (each with the honest module, the lasting patch and the honest module
    after it) judged in its own Evaluator, the parts side by side in threads as kt tune's are."""
    from concurrent.futures import ThreadPoolExecutor

    def judge(part: int) -> dict:
        (tmp_path / f"part{part}").mkdir()
        return evaluate_all(tmp_path / f"part{part}", target, modules(part, CPU_PARTS))

    with ThreadPoolExecutor(CPU_PARTS) as pool:
        verdicts = list(pool.map(judge, range(CPU_PARTS)))
    for part in verdicts:
        assert_caught(part, at_least=30 // CPU_PARTS)
    assert sum(len(part) for part in verdicts) >= 30


def test_every_planted_candidate_ends_wrong_or_rejected_in_static_mode(tmp_path):
    assert_all_parts_caught(tmp_path, "nvidia:sm_90")


def test_every_planted_candidate_ends_wrong_or_rejected_in_measured_mode(fake_device, tmp_path):
    assert_all_parts_caught(tmp_path, "fake:cpu")


def test_a_candidate_honest_only_while_verified_is_rejected_when_timed(fake_device, tmp_path):
    """Static mode times nothing, so these cheats are honest there; measured mode watches timed calls."""
    timed = {"honest": HONEST, **TIMED_CHEATS, "honest_after_a_lasting_patch": modules()["honest_after_a_lasting_patch"]}
    verdicts = evaluate_all(tmp_path, "fake:cpu", timed)
    assert_caught(verdicts, at_least=len(TIMED_CHEATS))
    assert all(kind == "rejected" for kind, _ in verdicts.values())


GPU_PARTS = 3  # parts run as separate processes (node ids ...on_the_gpu[0] etc.) can share the device at once


@pytest.mark.gpu
@pytest.mark.parametrize("part", range(GPU_PARTS))
def test_every_planted_candidate_ends_wrong_or_rejected_on_the_gpu(tmp_path, part):
    from kt_cli import plugins

    devices = [d for d in plugins.devices() if d.target.startswith("nvidia:")]
    if not devices:
        pytest.skip("no NVIDIA GPU")
    timed = TIMED_CHEATS if part == 0 else {}
    assert_caught(evaluate_all(tmp_path, devices[0].target, {**modules(part, GPU_PARTS), **timed}),
                  at_least=len(CHEATS) // GPU_PARTS)


def assert_leftovers_not_judged_as_work(tmp_path, target: str) -> None:
    """A candidate whose worker wrote every verification run's outputs and then crashed is never judged (no
    verdict follows a failed request). The next candidate, which writes nothing at the verification shapes
    and the right answer at the tuned one, must still be wrong there: the judge restores a case lent to a
    candidate that was not judged before it lends it again. Before, it was verified on the crashed one's
    outputs and timed `ok`."""
    from tests.cheats import HONEST_CALL, launch_body

    # the verification request's launches: every shape, the first again on other inputs, then the first once
    # more on buffers of its own, the last (the module is loaded afresh for each request)
    crashes_at_its_last_launch = launch_body(
        f"    {HONEST_CALL}\n    SEEN.append(tuple(x.shape))\n"
        "    if SEEN.count(SEEN[0]) == 3:\n        raise RuntimeError('crashed after writing every output')\n",
        prelude="\nSEEN = []\n")
    writes_only_the_tuned_shape = launch_body(f"    if m != {SHAPE['M']}:\n        return\n    {HONEST_CALL}\n")
    verdicts = evaluate_all(tmp_path, target, {"crasher": crashes_at_its_last_launch,
                                               "writes_only_the_tuned_shape": writes_only_the_tuned_shape,
                                               "honest": HONEST})
    assert verdicts["crasher"][0] == "crash", verdicts["crasher"]
    assert verdicts["writes_only_the_tuned_shape"][0] == "wrong", verdicts["writes_only_the_tuned_shape"]
    assert verdicts["honest"][0] == "ok", verdicts["honest"]


def test_what_a_candidate_left_unjudged_does_not_pass_for_the_next_ones_work(fake_device, tmp_path):
    assert_leftovers_not_judged_as_work(tmp_path, "fake:cpu")


@pytest.mark.gpu
def test_what_a_candidate_left_unjudged_does_not_pass_for_the_next_ones_work_on_the_gpu(tmp_path):
    from kt_cli import plugins

    devices = [d for d in plugins.devices() if d.target.startswith("nvidia:")]
    if not devices:
        pytest.skip("no NVIDIA GPU")
    assert_leftovers_not_judged_as_work(tmp_path, devices[0].target)
