"""The project's own error types; the CLI maps them to one red line and an exit code."""

import errno


class SpecbenchError(Exception):
    """Bad input or an unusable environment: one line for the user, exit code 2.

    The message must name the field, file or endpoint at fault and what is allowed.
    """

    exit_code = 2


class ServerError(SpecbenchError):
    """A server misbehaved (died, restarted, refused): the cell or campaign cannot go on."""


class ServerStartFailed(ServerError):
    """A server exited, or was not ready in time, before its first cell: `log_tail` says why."""

    def __init__(self, message: str, log_tail: list[str] | None = None) -> None:
        super().__init__(message)
        self.log_tail = log_tail or []


class ServersNotStarted(SpecbenchError):
    """A run ended with a server that would not start (its cells not run): exit code 3."""

    exit_code = 3


class CellsFailed(SpecbenchError):
    """A run finished, but some cells failed (each has its failure.json): exit code 1."""

    exit_code = 1


class RegressionDetected(Exception):
    """The gate found a regression beyond tolerance and noise: exit code 1."""

    exit_code = 1


#: What to do about an OS error, by errno (the path and the OS's words come first).
_OS_ADVICE = {
    errno.ENOSPC: "the disk is full: free space, then rerun (completed cells are kept)",
    errno.EDQUOT: "the disk quota is exhausted: free space, then rerun (completed cells are kept)",
    errno.EROFS: "the file system is read-only: choose a writable --output",
    errno.EACCES: "choose a writable --output, or fix the permissions",
    errno.EPERM: "the file or folder may be immutable (chattr +i): choose another --output",
    errno.ENOTDIR: "a file stands where a folder is needed: --output must name a directory",
    errno.EEXIST: "a file stands where a folder is needed: --output must name a directory",
    errno.EISDIR: "a folder stands where a file is expected: name a file",
    errno.ENOENT: "check the path",
}


def describe_os_error(error: OSError) -> str:
    """One line for an OS error: the path, the OS's words, and what to do."""
    path = error.filename if error.filename is not None else "(no path)"
    detail = error.strerror or str(error)
    advice = _OS_ADVICE.get(error.errno or 0, "check the path and the disk, then rerun")
    return f"{path}: {detail}; {advice}"
