# Experiment: the screen's host work beside a busy compile pool (not part of kt). Runs screen_cost.py
# alone, beside 15 niced processes that stream memory (as LLVM compiles do), and the same with the
# screen pinned to one core and the busy processes kept off it (and off its SMT sibling).
# Run from benchmarks/experiments on a GPU host; prints each run's table.
lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|Model name|MHz"
cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list
busy() {  # $1: cpu list for the busy processes ("" = any)
  for i in $(seq 15); do
    if [ -n "$1" ]; then pin="taskset -c $1"; else pin=""; fi
    $pin nice -n 10 python3 -c "
import numpy as np
a = np.ones(64 * 2**20 // 8)
while True:
    a.sum()" &
  done
}
echo "== alone"; python3 screen_cost.py 2>&1 | grep -v Warn
echo "== beside 15 streaming processes"; busy ""; sleep 2; python3 screen_cost.py 2>&1 | grep -v Warn; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
sib=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)
n=$(nproc)
others=$(python3 -c "
s=set()
for part in '$sib'.split(','):
    a,_,b=part.partition('-'); s|=set(range(int(a),int(b or a)+1))
print(','.join(str(c) for c in range($n) if c not in s))")
echo "== pinned to cpu 0, the 15 on $others"; busy "$others"; sleep 2; taskset -c 0 python3 screen_cost.py 2>&1 | grep -v Warn; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
