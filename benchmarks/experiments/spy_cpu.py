"""Where a `kt tune` process's own CPU goes, a trial at a time, from py-spy's raw samples of a run
(`py-spy record -s --nonblocking -f raw -o FILE -- python3 -c "from kt_cli.cli import main; main()" tune ...`).

    python benchmarks/experiments/spy_cpu.py FILE:TRIALS [FILE:TRIALS ...] [--rate 100]

Only the samples of the process py-spy started are read (its compile pool, device worker and judge are
other processes). A sample whose innermost frame waits (a condition, a pipe's poll, a sleep, a lock) is
counted apart: py-spy's --nonblocking reads some waits as running. Each sample is charged to the first
part of kt or Optuna its stack passes through (PARTS, in order), in milliseconds a trial."""

import argparse
from collections import Counter

WAITS = ("Condition.wait", "Event.wait", "poll (", "select (", "sleep", "_wait_for_tstate_lock", "acquire",
         "recv_bytes", "_recv", "readinto", "accept")
PARTS = [("_find_and_load", "import"), ("_get_trials (kt_cli", "read trials"), ("_rows (kt_cli", "read trials"),
         ("_write_pending", "write deferred"), ("_create_new_trial", "create trial"),
         ("set_trial_state_values", "set state"), ("_renew_heartbeats", "heartbeat"), ("_beat", "heartbeat"),
         ("sample_relative", "tpe"), ("sample_independent", "tpe"), ("infer_relative", "tpe"),
         ("ValidPoints", "valid points"), ("ledger", "ledger"), ("fail_dead", "recovery"), ("settle_dead", "recovery"),
         ("(kt_cli/evaluate/pool.py", "pool relay"), ("(kt_cli/evaluate/isolated.py", "device relay"),
         ("race.py", "race"), ("(kt_cli/evaluate/evaluator.py", "evaluator"), ("objective.py", "objective"),
         ("driver.py", "driver"), ("sqlalchemy", "sqlalchemy other"), ("optuna", "optuna other"),
         ("kt_cli", "kt other")]


def charged(path: str) -> tuple[Counter, int]:
    """(samples a part, samples waiting) of the process py-spy started."""
    parts, waits = Counter(), 0
    for line in open(path, errors="replace"):
        stack, _, count = line.rstrip().rpartition(" ")
        frames = stack.split(";")
        processes = sum(f.startswith("process ") for f in frames)
        if processes > 1:
            continue
        own = frames[1:] if processes else frames  # `py-spy record -p PID` (no subprocesses) names no process
        if own and any(w in own[-1] for w in WAITS):
            waits += int(count)
            continue
        joined = ";".join(own)
        parts[next((name for pattern, name in PARTS if pattern in joined), "other")] += int(count)
    return parts, waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="FILE:TRIALS (the trials the run evaluated)")
    parser.add_argument("--rate", type=float, default=100.0, help="py-spy's samples a second (-r)")
    args = parser.parse_args()
    runs = [(path, float(trials), *charged(path)) for path, trials in (r.rsplit(":", 1) for r in args.runs)]
    ms = lambda n, trials: 1000.0 * n / args.rate / trials  # noqa: E731
    names = sorted({k for *_, parts, _ in runs for k in parts}, key=lambda k: -sum(r[2][k] for r in runs))
    print(f"{'ms a trial':18s}" + "".join(f"{path.rsplit('/', 1)[-1][:14]:>15s}" for path, *_ in runs))
    for name in names:
        print(f"{name:18s}" + "".join(f"{ms(parts[name], trials):15.1f}" for _, trials, parts, _ in runs))
    print(f"{'all but imports':18s}" + "".join(f"{ms(sum(p.values()) - p['import'], t):15.1f}" for _, t, p, _ in runs))
    print(f"{'waits (apart)':18s}" + "".join(f"{ms(w, t):15.1f}" for _, t, _, w in runs))


if __name__ == "__main__":
    main()
