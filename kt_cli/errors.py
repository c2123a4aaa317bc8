"""Typed errors. Only cli.py turns them into a one-line message and an exit code."""


class KtError(Exception):
    """Base of every error kt reports to a user; `exit_code` is what the CLI exits with."""

    exit_code = 2


class BadInput(KtError):
    """The recipe, a flag or a file is wrong; the message names it and the fix."""


class EnvironmentProblem(KtError):
    """Something kt needs on this machine is missing (a toolchain, a device, a package)."""


class JobFailed(KtError):
    """The job ran but produced nothing usable (no candidate passed verification)."""

    exit_code = 1


class PluginConflict(KtError):
    """Two plugins registered the same name."""
