"""kt's snapshot of what a candidate may not replace (kt_cli.evaluate.launch_watch.PRISTINE) is taken
before torch._dynamo is imported (a worker's start skips that import: 2.7 s on a GPU host); the import,
when kt's first dispatch mode makes it, wraps torch.manual_seed. That wrapper is torch's own and is not
a candidate's patch; a candidate's replacement still is, wrapped like torch's or not."""

import subprocess
import sys

from tests.helpers import process_env

SCRIPT = """
import functools, sys
import torch
from kt_cli.evaluate import requests
from kt_cli.evaluate.launch_watch import PRISTINE
requests.prepare_worker()
assert "torch._dynamo" not in sys.modules, "a worker's start imported torch._dynamo"
requests.warm_watch()  # the first dispatch mode: imports torch._dynamo, which wraps torch.manual_seed
assert "torch._dynamo" in sys.modules and torch.manual_seed is not torch.random.manual_seed
assert PRISTINE.replaced() == [], PRISTINE.replaced()
original = torch.manual_seed
torch.manual_seed = functools.wraps(original)(lambda seed: None)  # a candidate's wrapper, not torch's
assert PRISTINE.replaced() == ["torch.manual_seed"], PRISTINE.replaced()
torch.manual_seed = original
torch.softmax = lambda *a, **k: None
assert PRISTINE.replaced() == ["torch.softmax"], PRISTINE.replaced()
print("ok")
"""


def test_torchs_own_wrapper_is_not_a_patch_and_a_candidates_still_is():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=process_env(),
                          timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
