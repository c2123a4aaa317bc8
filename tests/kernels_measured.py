"""Kernel module texts for the measured-mode tests on the fake device (tests/test_measured_mode.py)."""

from tests.helpers import SCALED_ADD

# scaled_add whose launch spins for about KT_TEST_SLOW_S seconds (a host loop, not a timer: a launch
# that touches the time module is rejected): the same source, slower when kt check runs
SLOWABLE = SCALED_ADD.replace(
    "def launch(k, inputs, params):\n",
    "def launch(k, inputs, params):\n    import os\n"
    "    for _ in range(int(2e7 * float(os.environ.get('KT_TEST_SLOW_S', '0')))):\n        pass\n")

# computes on its first calls (enough for verification and the first warm-up call), then skips the work
SKIPS_ON_REPEAT = SCALED_ADD.replace(
    "def launch(k, inputs, params):\n",
    "CALLS = [0]\n\n\ndef launch(k, inputs, params):\n    CALLS[0] += 1\n    if CALLS[0] > 4:\n        return\n")

# launches its (honest) kernel REPEAT times: the same output, REPEAT times the work; SEEDS puts the
# fast point first, so the slow ones race against it
REPEATS = SCALED_ADD.replace(
    "def launch(k, inputs, params):\n",
    'SEEDS = [{"BLOCK": 1024, "REPEAT": 1}]\n\n\ndef launch(k, inputs, params):\n'
    '    for _ in range(params["REPEAT"] - 1):\n        launch_once(k, inputs, params)\n'
    '    launch_once(k, inputs, params)\n\n\ndef launch_once(k, inputs, params):\n')

# REPEATS whose baseline is the kernel itself at one repeat, into a buffer of its own: a baseline as slow
# and as noisy as the candidates on the fake CPU device (torch's add beside interpreter-run kernels is
# too short to rank by the ratio to it)
REPEATS_BESIDE_ITSELF = REPEATS.replace(
    'def baseline(inputs):\n    return torch.add(inputs["y"], inputs["x"], alpha=0.5)\n',
    'BASELINE_OUT = {}\n\n\ndef baseline(inputs):\n    x = inputs["x"]\n'
    '    out = BASELINE_OUT.setdefault(x.data_ptr(), torch.empty_like(x))\n'
    '    scaled_add[(triton.cdiv(x.numel(), 1024),)](out, x, inputs["y"], 0.5, x.numel(), BLOCK=1024)\n')
assert REPEATS_BESIDE_ITSELF != REPEATS

# REPEATS, but its slow points compute alpha = 0.25 instead of 0.5: wrong, and raced out if not judged
WRONG_WHEN_SLOW = REPEATS.replace("0.5, n, BLOCK=block", "0.5 if params['REPEAT'] == 1 else 0.25, n, BLOCK=block")
assert WRONG_WHEN_SLOW != REPEATS
