"""When the device waits during `kt tune`, what are the trials in flight doing? Reads a wall_profile.py
JSON (its spans) and prints the device's busy and idle time between the first and last candidate, and,
for the longest idle gaps, how many trials were compiling, waiting their turn, or elsewhere.

    python benchmarks/experiments/device_gaps.py WALL_PROFILE.json [--top 15]
"""

from __future__ import annotations

import argparse
import json


def held_spans(spans: list) -> list[tuple[float, float]]:
    """The device's busy spans: the verification and timing requests (a raced-out candidate's screen is
    a timing request of its own), merged where one follows another within a millisecond (one thread
    holds the device's lock from a candidate's screen to its timing's end)."""
    held: list[list[float]] = []
    for _, _, start, end in sorted((s for s in spans if s[0] in ("device: verify", "device: time")),
                                   key=lambda s: s[2]):
        if held and start - held[-1][1] < 1e-3:
            held[-1][1] = max(held[-1][1], end)
        else:
            held.append([start, end])
    return [(start, end) for start, end in held]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    spans = json.loads(open(args.profile).read())["spans"]
    held = held_spans(spans)
    busy = sum(end - start for start, end in held)
    gaps = [(held[i + 1][0] - held[i][1], held[i][1]) for i in range(len(held) - 1)]
    print(f"device: first candidate at {held[0][0]:.1f} s, last done at {held[-1][1]:.1f} s, "
          f"busy {busy:.1f} s, idle between candidates {sum(g for g, _ in gaps):.1f} s")

    def during(label: str, moment: float) -> int:
        return sum(1 for s in spans if s[0] == label and s[2] <= moment <= s[3])

    for gap, at in sorted(gaps, reverse=True)[:args.top]:
        mid = at + gap / 2
        print(f"  idle {gap:5.2f} s at {at:5.1f} s: trials in flight {during('trial', mid)}, compiling "
              f"{during('compile', mid)}, waiting their turn {during('turn', mid)}")


if __name__ == "__main__":
    main()
