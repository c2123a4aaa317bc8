"""kt: tune GPU kernels across vendors."""

__version__ = "0.1.0"


def load(path, target=None):
    """Load a tuned kernel artifact for use at run time: `target` ('vendor:arch') defaults to the current
    GPU's; every argument is checked here (kt_cli.artifact.runtime)."""
    from kt_cli.artifact.runtime import load as _load

    return _load(path, target)
