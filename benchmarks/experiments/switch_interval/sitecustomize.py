"""Every Python process of a run with its GIL switch interval set, without changing kt: put this folder
first on PYTHONPATH and set KT_SWITCH_INTERVAL_S (Python's default: 0.005). A thread that wants the GIL
while another runs Python waits up to the interval; a hand-off between kt's threads (an answer from the
device's worker, the next candidate sent to it) takes several such waits."""

import os
import sys

if os.environ.get("KT_SWITCH_INTERVAL_S"):
    sys.setswitchinterval(float(os.environ["KT_SWITCH_INTERVAL_S"]))
