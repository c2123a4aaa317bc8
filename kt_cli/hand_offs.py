"""How soon a kt thread woken by another gets to run: the GIL's switch interval of kt's own processes.

A thread that wants the GIL while another runs Python waits up to the interpreter's switch interval (5 ms by
default) before the runner is made to let it go. kt's processes hand work between threads all the time: the
device's answer reaches the candidate's thread, that thread hands the device on to the next candidate, whose
request then goes to the device's worker. Once a study-driving process no longer spent its CPU reading the
study (trial_reads), each such hand-over waited for the GIL while the process's other threads (asks, writes,
relays) ran, and the device sat idle 10-15 ms (median) between two requests with two workers on a 2x H200 host.
At 1 ms the median gap was 6-11 ms and each device busy 70-82% of the middle of the run against 50-69%; on
another host, whose cores the compiles kept 90% busy, it changed nothing (docs/performance.md, thirty-sixth
session). Set in kt's command-line processes and in every worker they start, never by `kt_cli.load` (an
application's own process keeps its own setting)."""

from __future__ import annotations

import sys

SWITCH_INTERVAL_S = 0.001


def quick_hand_offs() -> None:
    """This process's switch interval: SWITCH_INTERVAL_S."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)
