"""The project's own error types; the CLI maps them to one red line and an exit code."""


class SpecbenchError(Exception):
    """Bad input or an unusable environment: one line for the user, exit code 2.

    The message must name the field, file or endpoint at fault and what is allowed.
    """

    exit_code = 2


class ServerError(SpecbenchError):
    """A server misbehaved (died, restarted, refused): the cell or campaign cannot go on."""


class CellsFailed(SpecbenchError):
    """A run finished, but some cells failed (each has its failure.json): exit code 1."""

    exit_code = 1


class RegressionDetected(Exception):
    """The gate found a regression beyond tolerance and noise: exit code 1."""

    exit_code = 1
