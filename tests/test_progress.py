"""What `kt tune` tells a user while it runs and when it ends: per study n/budget, the best so far
(earlier runs included), an ETA, a `resuming` line; a summary of what became of the candidates and of
the time spent in each phase."""

import json
import re

from kt_cli.search.tally import Tally, study_key
from kt_cli.types import TrialResult
from tests.helpers import dsl_recipe, kt

KEY = ("nvidia:sm_90", "N=4096")


def _result(kind: str, value: float | None = None, **phases) -> TrialResult:
    return TrialResult(kind, {"BLOCK": 256}, KEY[0], {"N": 4096}, "measured", value=value, phase_seconds=phases)


def _progress(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("[")]


def test_a_study_counts_earlier_runs_and_the_eta_follows_the_pace():
    tally = Tally()
    tally.expect(KEY, 10, "measured", [_result("ok", 2e-3), _result("wrong"), _result("invalid")])
    study = tally.opened(KEY, 10, "measured", [_result("ok", 2e-3), _result("wrong"), _result("invalid")])
    assert (study.earlier, study.evaluated, study.best, study.left) == (2, 2, 2e-3, 8)
    assert tally.eta_seconds() is None  # nothing evaluated by this run yet
    tally.started -= 4.0  # as if the two candidates below took 4 s
    tally.add(_result("ok", 1e-3, compile=1.0, verify=0.5, time=2.0))
    tally.add(_result("slow_compile", compile=10.0))
    assert study.evaluated == 4 and study.best == 1e-3 and study.kinds == {"ok": 2, "wrong": 1, "invalid": 1,
                                                                          "slow_compile": 1}
    assert 11.9 < tally.eta_seconds() < 13  # 2 s a candidate, 6 left
    assert tally.done == 2 and tally.kinds == {"ok": 1, "slow_compile": 1}  # this run only


def test_the_summary_says_what_became_of_the_candidates_and_where_the_time_went():
    tally = Tally(wall_seconds=60.0, device_busy_seconds=30.0)
    tally.expect(KEY, 6, "measured")
    for result in (_result("ok", 1e-3, compile=1.0, verify=0.5, time=2.0), _result("ok", 2e-3, compile=1.0),
                   _result("invalid"), _result("spills", compile=0.5), _result("slow_compile", compile=20.0),
                   _result("wrong", compile=1.0, verify=0.25)):
        tally.add(result)
    other = Tally(wall_seconds=50.0)  # a second worker process of the same run
    other.add(_result("spills", compile=1.0))
    tally.merge(other)
    lines = tally.summary()
    # the parts add up to the candidates; a point a constraint refused is said apart, not counted
    assert lines[0] == ("this run: 6 candidates in 1m 00s (6.0/min): 2 timed fully, 0 pruned, "
                        "4 failed (slow_compile 1, spills 2, wrong 1); 1 more point pruned by a constraint or a "
                        "resource limit (not counted)")
    assert lines[1] == ("time in each phase, summed over candidates: compile 24 s, verify 0.8 s, time 2.0 s; "
                        "device busy 50% of the run")
    assert study_key(_result("ok")) == KEY


def test_a_run_shows_n_of_budget_and_a_resumed_one_says_how_far_it_had_come(write, tmp_path):
    recipe = dsl_recipe(write, trials=2)
    first = kt("tune", recipe, "--out", tmp_path / "art")
    assert first.exit_code == 0, first.output
    lines = _progress(first)
    assert lines[0] == "[nvidia:sm_90 N=4096] 0/2 | nothing yet | best - | eta -"
    assert re.fullmatch(r"\[nvidia:sm_90 N=4096\] 1/2 \| ok 1 \| best ~[\d.]+ us \(est\) \| eta [\d.]+ s|"
                        r".* eta \d+m \d\ds", lines[1]), lines[1]
    assert lines[-1].startswith("[nvidia:sm_90 N=4096] 2/2 | ok 2 | best ~") and lines[-1].endswith("| done")
    assert "this run: 2 candidates in" in first.stdout and "2 verified and estimated, 0 pruned, 0 failed" in first.stdout
    assert re.search(r"time in each phase, summed over candidates: compile [\d.]+ s, verify [\d.]+ s", first.stdout)
    best = re.search(r"best (~[\d.]+ us)", lines[-1]).group(1)

    again = kt("tune", recipe, "--out", tmp_path / "art", "--trials", "3")
    assert again.exit_code == 0, again.output
    lines = _progress(again)
    assert lines[0] == f"[nvidia:sm_90 N=4096] resuming: 2 of 3 done, best {best} (est)"
    assert lines[-1].startswith("[nvidia:sm_90 N=4096] 3/3 | ok 3 | best ~")
    assert "this run: 1 candidate in" in again.stdout

    done = kt("tune", recipe, "--out", tmp_path / "art", "--trials", "3")
    assert _progress(done) == [f"[nvidia:sm_90 N=4096] resuming: 3 of 3 done, best {lines[-1].split('best ')[1].split(' |')[0]}"]
    assert "this run: no new trials: budget already spent" in done.stdout


def test_each_problem_counts_up_to_its_own_budget_and_shows_its_own_best(write, tmp_path):
    """Two problems tuned side by side: N=256 admits one BLOCK (its budget is 1), N=1048576 three. Each
    problem's lines count 0, 1, ... up to its own budget and show the best of its own trials."""
    from kt_cli.reports.format import seconds

    recipe = dsl_recipe(write, trials=3, shapes="[{N = 256}, {N = 1048576}]", extra='constraints = ["BLOCK <= N"]',
                        space="BLOCK = [256, 512, 1024]\nnum_warps = [2]")
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    trials = [json.loads(line) for line in (tmp_path / "art" / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    bests = {}
    for problem, budget in (("N=256", 1), ("N=1048576", 3)):
        lines = [re.fullmatch(r"\[nvidia:sm_90 (\S+)\] (\d+)/(\d+) \| .* \| best (.*?) \| .*", line)
                 for line in _progress(result) if line.startswith(f"[nvidia:sm_90 {problem}]")]
        assert lines and all(lines), _progress(result)
        assert {int(m.group(3)) for m in lines} == {budget}, (problem, _progress(result))
        counts = [int(m.group(2)) for m in lines]
        assert counts == sorted(counts) and sorted(set(counts)) == list(range(budget + 1)), (problem, counts)
        values = [t["value"] for t in trials if t["failure_kind"] == "ok" and t["shape"] == {"N": int(problem[2:])}]
        own = {seconds(v, "estimated") for v in values}
        shown = [m.group(4) for m in lines if m.group(4) != "-"]
        assert shown and set(shown) <= own, (problem, shown, own)  # each best is one of this problem's trials
        assert shown[-1] == seconds(min(values), "estimated"), (problem, shown)
        bests[problem] = shown[-1]
    assert bests["N=256"] != bests["N=1048576"], bests  # so that the other problem's best would show


def test_a_measured_run_reports_candidates_timed_fully_and_the_time_phase(fake_device, write, tmp_path):
    result = kt("tune", dsl_recipe(write, trials=2), "--target", "fake:cpu", "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    # The second candidate may be raced out if the first is surely faster; either way both were judged.
    counts = re.search(r"this run: 2 candidates in .*: (\d) timed fully(?:, (\d) raced out \(.*?\))?, 0 pruned, 0 failed",
                       result.stdout)
    assert counts, result.stdout
    assert int(counts.group(1)) + int(counts.group(2) or 0) == 2 and int(counts.group(1)) >= 1
    assert re.search(r"compile [\d.]+ s, (screen [\d.]+ s, )?verify [\d.]+ s, time [\d.]+ s; device busy \d+% of "
                     r"the run", result.stdout)
    # each trial keeps where its device time went, step by step, within its screen, verify and time phases
    timing = ("inputs", "setup", "warm-up", "preheat", "probe", "capture", "poison", "sampling", "retaken",
              "statistics", "checks", "relay", "judging")
    steps = {"screen": timing, "verify": ("inputs", "load", "launches", "relay", "judging"), "time": timing}
    trials = [json.loads(line) for line in (tmp_path / "art" / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    assert any({"verify", "time"} <= set(t["phase_seconds"]) for t in trials)  # the first is timed fully
    for trial in trials:
        phases = trial["phase_seconds"]
        for phase in (p for p in steps if p in phases):
            inside = [phases[f"{phase}.{s}"] for s in steps[phase]]
            assert all(s >= 0 for s in inside) and phases.get(f"{phase}.sampling", 1) > 0
            assert sum(inside) <= phases[phase] * 1.01 + 1e-3
        # and the search's own share: asking the sampler, waiting for its turn to take a unit of budget
        assert 0 <= phases["search.ask"] < 60 and 0 <= phases["search.turn"] < 60


def test_a_trials_ask_phase_holds_the_samplers_draw(write, tmp_path, monkeypatch):
    """`search.ask` is the search's time before a trial's point is known, the sampler's relative draw
    included: Optuna makes that draw at the trial's first suggest, after the trial exists (until
    2026-11-27 it was left out, and a sampler slow under four workers' load hid in no phase)."""
    import time

    import optuna

    draw = optuna.samplers.TPESampler.sample_relative

    def slow_draw(self, study, trial, search_space):
        time.sleep(0.3)
        return draw(self, study, trial, search_space)

    monkeypatch.setattr(optuna.samplers.TPESampler, "sample_relative", slow_draw)
    result = kt("tune", dsl_recipe(write, trials=3), "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    trials = [json.loads(line) for line in (tmp_path / "art" / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    asks = [t["phase_seconds"]["search.ask"] for t in trials if "search.ask" in t["phase_seconds"]]
    assert asks and max(asks) >= 0.3, asks  # the drawn points' trials (a seed is enqueued, not drawn)


def test_each_studys_paired_result_comes_from_the_worker_process_that_paired_it():
    # `kt tune --workers 2` shares the pairings of the winners with their references out, a study each in
    # turn: the run's results hold each study's from the process that paired it
    first, second = Tally(), Tally()
    first.results, second.results = [{"study": 0}, None, {"study": 2}], [None, {"study": 1}, None]
    first.merge(second)
    assert first.results == [{"study": 0}, {"study": 1}, {"study": 2}]
    alone = Tally()
    alone.merge(second)
    assert alone.results == [None, {"study": 1}, None]
