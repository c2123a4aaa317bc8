"""Kernel module texts for the measured-mode tests on the fake device (tests/test_measured_mode.py)."""

from tests.helpers import SCALED_ADD

# scaled_add whose launch sleeps KT_TEST_SLOW_S seconds: the same source, slower when kt check runs
SLOWABLE = SCALED_ADD.replace(
    "def launch(k, inputs, params):\n",
    "def launch(k, inputs, params):\n    import os, time\n    time.sleep(float(os.environ.get('KT_TEST_SLOW_S', '0')))\n")

# computes on its first calls (enough for verification and the first warm-up call), then skips the work
SKIPS_ON_REPEAT = SCALED_ADD.replace(
    "def launch(k, inputs, params):\n",
    "CALLS = [0]\n\n\ndef launch(k, inputs, params):\n    CALLS[0] += 1\n    if CALLS[0] > 4:\n        return\n")
