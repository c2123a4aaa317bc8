"""kt: tune GPU kernels across vendors."""

__version__ = "0.1.0"


def load(path, target=None, finalize=None):
    """Load a tuned kernel artifact for use at run time: `target` ('vendor:arch') defaults to the current
    GPU's; `finalize` (default on, unless KT_FINALIZE=0) times an estimated config's shortlist at its
    first call; every argument is checked here (kt_cli.artifact.runtime)."""
    from kt_cli.artifact.runtime import load as _load

    return _load(path, target, finalize)
