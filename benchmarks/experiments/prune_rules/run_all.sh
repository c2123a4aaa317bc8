#!/bin/bash
# Reproduce every figure of REPORT.md (about 35 minutes on 2 cores). Read-only use of /work/main.
set -e
cd /tmp/kt/prune
. /work/main/.venv/bin/activate
python data.py                 # points.json: (estimate, measured) per problem per dataset, each with its calibration
python sweep.py                # sweep.json: rules a, b, c, d, a&c, a|c, env in 200 random orders
python sweep2.py               # + cconf, g, gconf
python sweep3.py               # + adapt (the recommended family)
python tpe_all.py              # sweep_tpe.json: every rule on the real tunes' trial orders (s14-s20)
python cv.py > cv.txt          # leave-one-dataset-out selection
python tail.py > tail.txt      # shortlisted variants in 1000 orders (tail of the worst kept)
python robust.py > robust.txt
python tpe_breakdown.py > tpe_breakdown.md
python heldout_s31.py > heldout_s31.md
python grids.py "a " > grid_a.md
python posthoc_guard.py > posthoc_guard.md
python tables.py per "a r=1.5 k=3" "a r=1.45 k=1" "adapt ra=1.5 ka=1 q=0.3 z=1.5 kc=5 rg=1.05 rho=0" "c q=0.5 k=4 seen" "b r=1.5 k=3" > per_dataset.md
python tables.py kinds matmul,attention,other > kinds_all.md
python tables.py kinds matmul,attention > kinds_mmatt.md
python grids.py "b " > grid_b.md; python grids.py "c " seen > grid_c_seen.md; python grids.py "c " measured > grid_c_meas.md; python grids.py "d-tight" > grid_d.md
# REPORT.md was assembled from these files (snippets.md) and proposed.diff (diff -u proposed/a proposed/b)
