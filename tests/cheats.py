"""Planted candidates: kernel modules as a user or a model might write them, each of which computes a
wrong answer, computes it with torch instead of its kernel, or games the judge or the clock. Every
one must end `wrong` or `rejected` (tests/test_adversarial.py). Keep it growing: every cheat you can
think of goes in, each a complete module around the same row softmax."""

HEAD = '''
import torch
import triton
import triton.language as tl

OUTPUTS = ("y",)
VERIFY_SHAPES = [{"M": 7, "N": 300}, {"M": 9, "N": 500}]
'''

KERNEL = '''
@triton.jit
def row_softmax(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    y = e / tl.sum(e, 0)
    tl.store(y_ptr + row * n + cols, y, mask=cols < n)
'''

PROBLEM = '''
def make_inputs(shape, dtype, t):
    return {"x": t.randn(shape["M"], shape["N"], dtype=dtype), "y": t.empty(shape["M"], shape["N"], dtype=dtype)}


def reference(inputs):
    return {"y": torch.softmax(inputs["x"].double(), -1)}


def flops(shape, dtype):
    return 4.0 * shape["M"] * shape["N"]


def bytes_moved(shape, dtype):
    return 2.0 * shape["M"] * shape["N"] * dtype.itemsize


def shape_of(inputs):
    return dict(zip("MN", inputs["x"].shape))
'''

LAUNCH = '''
def launch(k, inputs, params):
    x, y = inputs["x"], inputs["y"]
    m, n = x.shape
    k.row_softmax[(m,)](y, x, n, BLOCK=max(params["BLOCK"], triton.next_power_of_2(n)))
'''
HONEST_CALL = 'k.row_softmax[(m,)](y, x, n, BLOCK=max(params["BLOCK"], triton.next_power_of_2(n)))'


def module(kernel: str = KERNEL, launch: str = LAUNCH, prelude: str = "") -> str:
    return HEAD + prelude + kernel + PROBLEM + launch


def kernel_edit(old: str, new: str) -> str:
    assert old in KERNEL, old
    return module(kernel=KERNEL.replace(old, new))


def launch_body(body: str, prelude: str = "") -> str:
    """A launch whose body is `body` (lines indented by 4; x, y, m, n are defined)."""
    head = 'def launch(k, inputs, params):\n    x, y = inputs["x"], inputs["y"]\n    m, n = x.shape\n'
    if "k.row_softmax" not in body:  # a token kernel launch, so that kt's launch recording is satisfied
        body = f"    {HONEST_CALL}\n" + body
    return module(launch="\n" + head + body, prelude=prelude)


HONEST = module()

CHEATS = {
    # wrong answers the former norm-wise check or small verification shapes let through
    "zeroed_row": kernel_edit("    tl.store(", "    y = tl.where(row == 5, 0.0, y)\n    tl.store("),
    "zeroed_last_row": kernel_edit("    tl.store(", "    y = tl.where(row == tl.num_programs(0) - 1, 0.0, y)\n    tl.store("),
    "zeroed_last_tile": kernel_edit("    tl.store(", "    y = tl.where(cols >= n - 16, 0.0, y)\n    tl.store("),
    "off_by_one_mask": kernel_edit("tl.store(y_ptr + row * n + cols, y, mask=cols < n)",
                                   "tl.store(y_ptr + row * n + cols, y, mask=cols < n - 1)"),
    "right_only_at_small_shapes": launch_body('    k.row_softmax[(m,)](y, x, n, BLOCK=params["BLOCK"])\n'),
    "every_other_row": launch_body('    k.row_softmax[(m // 2,)](y, x, n, BLOCK=triton.next_power_of_2(n))\n'),
    "half_precision": kernel_edit("    e = tl.exp(x - tl.max(x, 0))",
                                  "    x = x.to(tl.float16).to(tl.float32)\n    e = tl.exp(x - tl.max(x, 0))"),
    "uniform_output": launch_body("    y.fill_(1.0 / n)\n"),
    "output_is_the_input": launch_body("    y.copy_(x)\n"),
    "writes_into_its_input": kernel_edit("    tl.store(", "    tl.store(x_ptr + row * n + cols, y, mask=cols < n)\n    tl.store("),
    # work skipped or cached across calls
    "skip_on_repeat": launch_body(f"    CALLS[0] += 1\n    if CALLS[0] > 4:\n        return\n    {HONEST_CALL}\n",
                                  prelude="\nCALLS = [0]\n"),
    "cached_first_output": launch_body(
        f"    key = tuple(x.shape)\n    if key in CACHE:\n        y.copy_(CACHE[key])\n        return\n    {HONEST_CALL}\n"
        "    CACHE[key] = y.clone()\n", prelude="\nCACHE = {}\n"),
    "cache_in_a_mutable_default": module(launch=LAUNCH.replace("def launch(k, inputs, params):",
                                                               "def launch(k, inputs, params, _memo={}):").replace(
        "    k.row_softmax", "    if x.shape in _memo:\n        y.copy_(_memo[x.shape])\n        return\n    k.row_softmax")
        + '    _memo[x.shape] = y.clone()\n'),
    "cache_in_a_closure": module(launch='''
def _make_launch():
    seen = {}

    def launch(k, inputs, params):
        x, y = inputs["x"], inputs["y"]
        m, n = x.shape
        if x.shape in seen:
            y.copy_(seen[x.shape])
            return
        k.row_softmax[(m,)](y, x, n, BLOCK=triton.next_power_of_2(n))
        seen[x.shape] = y.clone()
    return launch


launch = _make_launch()
'''),
    # computing with torch instead of the kernel
    "torch_through_operators": launch_body("    e = 2.718281828459045 ** (x - x.amax(-1, keepdim=True))\n"
                                           "    y.copy_(e / e.sum(-1, keepdim=True))\n"),
    "torch_unlisted_methods": launch_body("    e = (x - x.nanmean() * 0).exp()\n    y.copy_(e / e.nansum(-1, keepdim=True))\n"),
    "setitem_expression": launch_body("    y[:] = x.softmax(-1)\n"),
    "torch_alias": launch_body("    T = torch\n    y.copy_(T.softmax(x, -1))\n"),
    "calls_its_reference": launch_body('    y.copy_(reference(inputs)["y"])\n'),
    "kernel_then_torch_fixup": launch_body(f"    {HONEST_CALL}\n    y.mul_(1.0)\n    y.add_(x * 0)\n"),
    "numpy_compute": launch_body("    import numpy as np\n    a = x.numpy()\n    e = np.exp(a - a.max(-1, keepdims=True))\n"
                                 "    y.copy_(torch.from_numpy(e / e.sum(-1, keepdims=True)))\n"),
    "python_lists": launch_body("    import math\n    rows = x.tolist()\n    out = []\n    for r in rows:\n"
                                "        mx = max(r)\n        e = [math.exp(v - mx) for v in r]\n        s = sum(e)\n"
                                "        out.append([v / s for v in e])\n    y.copy_(torch.tensor(out, dtype=y.dtype))\n"),
    "another_thread": launch_body("    import threading\n    t = threading.Thread(target=lambda: y.copy_(x.softmax(-1)))\n"
                                  "    t.start()\n    t.join()\n"),
    "another_process": launch_body(f"    import subprocess\n    subprocess.Popen(['true']).wait()\n    {HONEST_CALL}\n"),
    "side_stream": launch_body(f"    s = torch.cuda.Stream()\n    with torch.cuda.stream(s):\n        {HONEST_CALL}\n"),
    # the clock
    "sleeps_on_its_first_calls": launch_body(f"    import time\n    CALLS[0] += 1\n    if CALLS[0] < 4:\n"
                                             f"        time.sleep(0.001)\n    {HONEST_CALL}\n", prelude="\nCALLS = [0]\n"),
    "reads_the_clock": launch_body(f"    import time\n    t0 = time.perf_counter()\n    {HONEST_CALL}\n"),
    "patches_the_clock": module(prelude="\nimport time\ntime.perf_counter = lambda: 0.0\n"),
    "patches_a_device_event": module(prelude="\ntorch.cuda.Event = object\n"),
    # the judge
    "alias_patches_the_reference": module(
        prelude="\nimport torch as T\nT.softmax = lambda x, dim=None, **kw: T.zeros_like(x)\n",
        launch=LAUNCH.replace(f"    {HONEST_CALL}", f"    {HONEST_CALL}\n    y.zero_()")),
    "patches_kt_verification": launch_body(
        "    import kt_cli.evaluate.verify as v\n    v.compare = lambda *a, **k: (0.0, 0.0)\n    y.zero_()\n"),
    "overwrites_the_reference_in_memory": launch_body(
        "    import gc\n    for o in gc.get_objects():\n"
        "        if isinstance(o, torch.Tensor) and o is not y and o is not x and o.shape == y.shape:\n"
        "            o.zero_()\n    y.zero_()\n"),
    "patches_the_judges_method": launch_body(
        "    from kt_cli.evaluate import verify\n    verify.Judge.judge = lambda self, *a, **k: None\n"
        "    y.zero_()\n"),
    "patches_tensor_equality": module(prelude="\ntorch.Tensor.__eq__ = lambda a, b: torch.ones_like(a, dtype=torch.bool)\n",
                                      launch=LAUNCH.replace(f"    {HONEST_CALL}", f"    {HONEST_CALL}\n    y.zero_()")),
}

# A module whose patch is meant to outlive its round; the honest module evaluated after it must not be
# affected (every module gets fresh processes).
# Cheats that only timed calls can show (static mode times nothing, so there they are honest).
TIMED_CHEATS = {
    # its kernel while kt records (meta tensors) or verifies (tripwires set), torch's softmax when timed
    "honest_only_while_the_clock_is_watched": launch_body(
        "    import time\n    if x.is_meta or type(time.perf_counter).__name__ != 'builtin_function_or_method':\n"
        f"        {HONEST_CALL}\n        return\n    y.copy_(torch.softmax(x, -1))\n"),
    # the same, and it switches the watch's verdict off from inside its first timed call
    "unwatches_its_timed_calls": launch_body(
        "    import time\n    if x.is_meta or type(time.perf_counter).__name__ != 'builtin_function_or_method':\n"
        f"        {HONEST_CALL}\n        return\n"
        "    from kt_cli.evaluate import launch_watch\n"
        "    launch_watch.LaunchWatch.verdict = lambda self: None\n    y.copy_(torch.softmax(x, -1))\n"),
}

OUTLIVES_ITS_ROUND = module(prelude="\nimport torch as T\nT.softmax = lambda x, dim=None, **kw: T.zeros_like(x)\n"
                                    "T.Tensor.softmax = lambda self, dim=None, **kw: T.zeros_like(self)\n")
