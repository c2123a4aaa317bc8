"""Shared fixtures. The repository root and plugins/ go on sys.path so the tests run from any
checkout (worktrees included), installed or not."""

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "plugins"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
# kt's per-user cache (calibrations...) of the person running the tests must not change what they see
os.environ["KT_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-test-cache-")
# nor a `kt serve` of theirs (a socket's path ends at 107 bytes: a short directory)
os.environ["KT_RESIDENT_DIR"] = tempfile.mkdtemp(prefix="kt-res-", dir="/tmp")


def pytest_sessionfinish(session, exitstatus):
    """No resident server started by a test outlives the run (a keeper lives in a session of its own)."""
    import signal

    from tests.helpers import resident_keepers

    for pid in resident_keepers(os.environ["KT_RESIDENT_DIR"]):
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and getattr(torch.version, "hip", None) is None


def _has_rocm() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and getattr(torch.version, "hip", None) is not None


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs an NVIDIA GPU")
    skip_amd = pytest.mark.skip(reason="needs a ROCm GPU")
    cuda, rocm = _has_cuda(), _has_rocm()
    for item in items:
        if "gpu" in item.keywords and not cuda:
            item.add_marker(skip_gpu)
        if "amd" in item.keywords and not rocm:
            item.add_marker(skip_amd)


@pytest.fixture
def plugin(request):
    """Register a plugin object for one test: `plugin(obj, name)`; removed afterwards."""
    from kt_cli.plugins import load_plugins

    pm = load_plugins()
    registered = []

    def register(obj, name):
        pm.register(obj, name=name)
        registered.append(name)
        return obj

    yield register
    for name in registered:
        pm.unregister(name=name)


@pytest.fixture
def fake_device(plugin, monkeypatch):
    """The fake CPU vendor (tests/fake_vendor.py) in this process and in every worker it starts:
    target `fake:cpu`, measured mode on the CPU."""
    from tests import fake_vendor

    monkeypatch.setenv("KT_PLUGINS", "tests.fake_vendor")
    plugin(fake_vendor, "tests.fake_vendor")
    return fake_vendor


@pytest.fixture
def write(tmp_path):
    """Write a file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return _write
