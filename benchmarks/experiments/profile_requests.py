"""Experiment helper: merge the cProfile files of kt worker requests (KT_PROFILE_DIR with
KT_PROFILE_REQUESTS=1, kt_cli/evaluate/requests.dispatch) per request kind and print the top calls.

    python profile_requests.py DIR > report.txt
"""
import glob, pstats, sys, io
for op in ("time_held", "judge_cases", "hold_cases"):
    files = sorted(glob.glob(f"{sys.argv[1]}/{op}-*.prof"))
    if not files: continue
    st = pstats.Stats(files[0])
    for f in files[1:]: st.add(f)
    out = io.StringIO(); st.stream = out
    print(f"===== {op}: {len(files)} requests")
    st.sort_stats("cumulative").print_stats(45); st.sort_stats("tottime").print_stats(30)
    print(out.getvalue())
