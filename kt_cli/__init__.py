"""kt: tune GPU kernels across vendors."""

__version__ = "0.1.0"


def load(path, **kwargs):
    """Load a tuned kernel artifact for use at run time (see kt_cli.artifact.runtime)."""
    from kt_cli.artifact.runtime import load as _load

    return _load(path, **kwargs)
