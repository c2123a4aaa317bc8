"""Experiment helper: merge the cProfile files of kt worker requests (KT_PROFILE_DIR with
KT_PROFILE_REQUESTS=1, kt_cli/evaluate/requests.dispatch) per request kind and print the top calls.

    python profile_requests.py DIR > report.txt
"""
import glob
import io
import pstats
import sys


def report(directory: str, op: str) -> str:
    files = sorted(glob.glob(f"{directory}/{op}-*.prof"))
    if not files:
        return ""
    out = io.StringIO()
    stats = pstats.Stats(*files, stream=out)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)
    return f"===== {op}: {len(files)} requests\n{out.getvalue()}"


if __name__ == "__main__":
    for name in ("time_held", "judge_cases", "hold_cases"):
        print(report(sys.argv[1], name))
