"""benchmarks/run.py's account of a tune's progress: when each problem's best (within 1% and 2%) and
Triton autotune's time were first reached (issue 16's time-to-result figures)."""

from __future__ import annotations

import datetime
import sys

import optuna

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import run  # noqa: E402


def test_a_problems_progress_says_when_its_best_and_autotunes_time_were_first_reached(tmp_path):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    start = datetime.datetime(2026, 11, 28, 12, 0, 0)
    study = optuna.create_study(study_name="matmul|nvidia:sm_90|measured|M=8", storage=storage)
    space = {"x": optuna.distributions.IntDistribution(0, 9)}
    for x, after, value in ((0, 1, 3.0e-3), (1, 2, 1.015e-3), (2, 4, 1.0e-3), (3, 3, None)):
        state = optuna.trial.TrialState.COMPLETE if value else optuna.trial.TrialState.FAIL
        study.add_trial(optuna.trial.FrozenTrial(
            number=x, state=state, value=value, datetime_start=start,
            datetime_complete=start + datetime.timedelta(seconds=after), params={"x": x}, distributions=space,
            user_attrs={}, system_attrs={}, intermediate_values={}, trial_id=x))
    optuna.create_study(study_name="matmul|nvidia:sm_90|estimated|M=8", storage=storage)  # static: not counted

    progress = run.completions(storage, start)
    assert progress == {"M=8": [[1.0, 3.0e-3], [2.0, 1.015e-3], [4.0, 1.0e-3]]}  # the failed trial is not a result
    assert run.first_within(progress["M=8"], 1.01) == 4.0 and run.first_within(progress["M=8"], 1.02) == 2.0
    entry = {"progress": progress, "anchors": [{"shape": "M=8", "autotune": {"median_s": 1.02e-3}},
                                               {"shape": "M=9", "eager_s": 1e-3}]}
    assert run.reached_anchor(entry) == {"M=8": 2.0}  # 1.015 ms beat autotune's 1.02 ms two seconds in
    entry["anchors"][0]["autotune"]["median_s"] = 0.9e-3
    assert run.reached_anchor(entry) == {"M=8": None}  # never as fast as autotune


def test_the_binary_that_ran_keeps_its_resources_into_the_ranking_dataset(tmp_path, monkeypatch):
    # a GPU host's Triton may allocate registers otherwise than the CPU machine's cross-compile: a run keeps
    # the resources of the binary the GPU ran, and the ranking dataset carries them beside its own features
    import json

    import rank_dataset

    ran = {"registers": 119, "shared_bytes": 0, "programs_per_unit": 4}
    art = tmp_path / "art"
    art.mkdir()
    trial = {"mode": "measured", "shape": {"M": 3072, "N": 20480}, "params": {"BLOCK_N": 4096}, "failure_kind": "ok",
             "value": 7.5e-5, "seconds": 0.4, "message": "", "resources": ran}
    (art / "trials.jsonl").write_text(json.dumps(trial) + "\n" + json.dumps({**trial, "mode": "estimated"}) + "\n")
    (summary,) = run.trial_summary(art)
    assert summary["resources"] == ran and summary["value"] == 7.5e-5
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "bench_x.json").write_text(json.dumps({
        "environment": {"date": "2026-11-28T21:00:00", "device": "NVIDIA H200", "target": "nvidia:sm_90"},
        "kernels": [{"recipe": "softmax", "dtype": "bfloat16", "trials": [summary]}]}))
    monkeypatch.setattr(rank_dataset, "ROOT", tmp_path)
    monkeypatch.setattr(rank_dataset, "same_code_as_today", lambda recipe, date: True)
    (record,) = rank_dataset.measured_trials("bench_x.json")
    assert record["device_resources"] == ran and record["measured_s"] == 7.5e-5


def test_the_features_read_from_the_binary_timed_are_the_datasets_features_and_a_refresh_keeps_them(tmp_path,
                                                                                                    monkeypatch):
    # a measured trial keeps every feature the cost model read from the binary the GPU then ran: the ranking
    # dataset holds the model against those, compiles nothing for the point, and --refresh leaves them as read
    import json
    import sys

    import rank_dataset

    timed = {"resources": {"registers": 80, "programs_per_unit": 3}, "programs": 10240, "launches": 1,
             "instructions": {"total": 416, "global_load_bytes": 288}, "work": {"flops": 1.0}}
    art = tmp_path / "art"
    art.mkdir()
    trial = {"mode": "measured", "shape": {"M": 20480, "N": 5632}, "params": {"BLOCK_N": 8192}, "failure_kind": "ok",
             "value": 2e-4, "seconds": 0.4, "message": "", "resources": timed["resources"],
             "stats": {"median": 2e-4, "features": timed}}
    raced = {**trial, "params": {"BLOCK_N": 4096}, "failure_kind": "raced_out", "value": None, "stats": {}}
    (art / "trials.jsonl").write_text(json.dumps(trial) + "\n" + json.dumps(raced) + "\n")
    summaries = run.trial_summary(art)
    assert summaries[0]["features"] == timed and "features" not in summaries[1]
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "bench_x.json").write_text(json.dumps({
        "environment": {"date": "2026-11-29T12:00:00", "device": "NVIDIA H200", "target": "nvidia:sm_90"},
        "kernels": [{"recipe": "layernorm", "dtype": "bfloat16", "trials": summaries}]}))
    monkeypatch.setattr(rank_dataset, "same_code_as_today", lambda recipe, date: True)
    monkeypatch.setattr(rank_dataset, "ProcessPoolExecutor", _InProcess)
    monkeypatch.setattr(rank_dataset, "recipe_path", lambda name: ROOT / "recipes" / f"{name}.toml")
    compiled = []
    real_compile = rank_dataset.features
    monkeypatch.setattr(rank_dataset, "features", lambda r: compiled.append(r) or real_compile(r))
    monkeypatch.setattr(rank_dataset, "ROOT", tmp_path)
    out = tmp_path / "fresh.jsonl"
    monkeypatch.setattr(sys, "argv", ["rank_dataset.py", "--runs", "bench_x.json", "--out", str(out)])
    rank_dataset.main()
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["features"] == timed and record["features_from"] == "device" and record["kernel"] == "layernorm"
    assert "device_features" not in record  # held once
    compiled.clear()
    monkeypatch.setattr(sys, "argv", ["rank_dataset.py", "--refresh", str(out)])
    rank_dataset.main()
    assert not compiled and json.loads(out.read_text())["features"] == timed


def test_refreshing_a_dataset_keeps_the_features_of_kernels_changed_since_their_measurement(tmp_path, monkeypatch):
    # rank_dataset.py --refresh recompiles stored points with today's reader; a point whose kernel module changed
    # since it was measured keeps its stored features (today's would describe another kernel than the one timed:
    # the attention module changed after every stored attention run, and its refreshed points scored otherwise)
    import json
    import sys

    import rank_dataset

    stored = [{"recipe": "softmax", "date": "2026-11-28T21:00:00", "features": {"instructions": {"total": 1}}},
              {"recipe": "attention", "date": "2026-11-28T21:00:00", "features": {"instructions": {"total": 2}}}]
    path = tmp_path / "fresh.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in stored))
    monkeypatch.setattr(rank_dataset, "same_code_as_today", lambda recipe, date: recipe == "softmax")
    monkeypatch.setattr(rank_dataset, "ProcessPoolExecutor", _InProcess)
    monkeypatch.setattr(rank_dataset, "features", lambda record: {**record, "features": {"instructions": {"total": 9}}})
    monkeypatch.setattr(sys, "argv", ["rank_dataset.py", "--refresh", str(path)])
    rank_dataset.main()
    totals = [json.loads(line)["features"]["instructions"]["total"] for line in path.read_text().splitlines()]
    assert totals == [9, 2]


class _InProcess:
    def __init__(self, jobs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, items, chunksize=1):
        return map(fn, items)
