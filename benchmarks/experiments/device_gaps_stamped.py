"""How long the device's worker and the judge sit idle between requests, from a run's request stamps
(KT_PROFILE_DIR: each worker's pipe-worker-PID.log, one line `op received answered ...` a request).

    python benchmarks/experiments/device_gaps_stamped.py DIR [DIR ...]

Per worker that ran device requests (time_held, launch_held) or the judge's (judge_cases, hold_cases):
its requests, the share of its span spent in them, and its gaps between an answer and the next request,
split at 50 ms (a short gap: the hand-off between two requests while work waits; a long one: nothing to
do). A short gap is the time a candidate's next request takes to reach the worker: the judge's requests
between two device requests and the pipe hops on the way."""

import argparse
import glob
import os

DEVICE, JUDGE = {"time_held", "launch_held", "recheck", "ready_device"}, {"judge_cases", "hold_cases", "ready_judge"}
SHORT_S = 0.05


def worker_gaps(path: str) -> dict | None:
    requests = []
    for line in open(path):
        fields = line.split()
        if fields[0] != "start" and len(fields) >= 3:
            requests.append((fields[0], float(fields[1]), float(fields[2])))
    ops = {op for op, _, _ in requests}
    kind = "device" if ops & DEVICE else "judge" if ops & JUDGE else None
    if kind is None or len(requests) < 2:
        return None
    requests.sort(key=lambda r: r[1])
    gaps = [nxt[1] - cur[2] for cur, nxt in zip(requests, requests[1:])]
    short = sorted(g for g in gaps if g < SHORT_S)
    span = requests[-1][2] - requests[0][1]
    return {"kind": kind, "requests": len(requests), "busy_s": sum(b - a for _, a, b in requests), "span_s": span,
            "short": len(short), "short_s": sum(short), "short_median_s": short[len(short) // 2] if short else 0.0,
            "long_s": sum(g for g in gaps if g >= SHORT_S)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+")
    for folder in parser.parse_args().dirs:
        for path in sorted(glob.glob(os.path.join(folder, "pipe-worker-*.log"))):
            g = worker_gaps(path)
            if g:
                print(f"{folder} {os.path.basename(path)} {g['kind']}: {g['requests']} requests, "
                      f"busy {g['busy_s']:.1f} of {g['span_s']:.1f} s ({g['busy_s'] / g['span_s']:.0%}); "
                      f"{g['short']} short gaps, "
                      f"{g['short_s']:.2f} s (mean {1000 * g['short_s'] / max(1, g['short']):.1f} ms, median "
                      f"{1000 * g['short_median_s']:.1f} ms); long gaps {g['long_s']:.1f} s")


if __name__ == "__main__":
    main()
