"""kt's snapshot of what a candidate may not replace (kt_cli.evaluate.launch_watch.PRISTINE) is taken
before torch._dynamo is imported, and kt's launch watch never imports it (4.9-6.2 s of a device worker's
start on the H100 hosts, where torch wrapped the watch's dispatch mode in torch._dynamo.disable). A
candidate may import it, which wraps torch.manual_seed: that wrapper is torch's own and is not a
candidate's patch; a candidate's replacement still is, wrapped like torch's or not."""

import subprocess
import sys

from tests.helpers import process_env

SCRIPT = """
import functools, sys
import torch
from kt_cli.evaluate import requests
from kt_cli.evaluate.launch_watch import PRISTINE, LaunchWatch
requests.prepare_worker()
assert "torch._dynamo" not in sys.modules, "a worker's start imported torch._dynamo"
with LaunchWatch().watching():
    torch.ones(2).add(1)
assert "torch._dynamo" not in sys.modules, "the launch watch imported torch._dynamo"
import torch._dynamo  # a candidate's import: it wraps torch.manual_seed
assert torch.manual_seed is not torch.random.manual_seed
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
