# Experiment (not part of kt): when `kt tune --workers 4` prints what, and every worker request's pipe times
# (KT_PROFILE_DIR: pipe-worker-PID.log, pipe-caller-PID.log), to see what runs after the last trial. Run from the
# repository root on a 4-GPU host with $OUT set.
# timestamps on kt's output, and every worker request's pipe times (KT_PROFILE_DIR)
mkdir -p /tmp/pipes
T0=$(date +%s.%N)
echo "t0 $T0" > $OUT/t0.txt
KT_PROFILE_DIR=/tmp/pipes python3 -c "from kt_cli.cli import main; main()" tune recipes/matmul.toml --workers ${WORKERS:-4} --out /tmp/t4 2>&1 | python3 -c "
import sys, time
t0 = float(open('$OUT/t0.txt').read().split()[1])
for line in sys.stdin:
    print(f'{time.time() - t0:8.2f} {line}', end='', flush=True)
" > $OUT/kt4.log
echo "end $(date +%s.%N)" >> $OUT/t0.txt
cd /tmp/pipes && tar czf $OUT/pipes.tgz . 
tail -5 $OUT/kt4.log
