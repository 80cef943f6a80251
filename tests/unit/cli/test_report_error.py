"""The CLI's last line of defence: known errors, even wrapped by a TaskGroup, are one line."""

from __future__ import annotations

import errno
import signal

import pytest

from specbench.cli.main import report_error
from specbench.common.errors import CellsFailed, SpecbenchError
from specbench.common.interrupt import Interrupted


def lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_a_stop_signal_raised_by_several_request_tasks_is_one_interrupted_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    group = BaseExceptionGroup(
        "unhandled errors in a TaskGroup",
        [Interrupted(signal.SIGTERM), Interrupted(signal.SIGTERM), ValueError("x")],
    )
    assert report_error(group) == 143
    assert lines(capsys) == [
        "interrupted: interrupted by SIGTERM; completed cells are kept; a rerun measures the rest"
    ]


def test_os_errors_name_the_path_and_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    error = OSError(errno.ENOSPC, "No space left on device", "/r/x/requests.jsonl")
    assert report_error(ExceptionGroup("g", [error])) == 2
    assert lines(capsys) == [
        "error: /r/x/requests.jsonl: No space left on device; the disk is full: free space, "
        "then rerun (completed cells are kept)"
    ]
    assert report_error(OSError(errno.EROFS, "Read-only file system", "/ro")) == 2
    assert lines(capsys) == [
        "error: /ro: Read-only file system; the file system is read-only: choose a writable "
        "--output"
    ]


def test_own_errors_keep_their_codes_and_brackets(capsys: pytest.CaptureFixture[str]) -> None:
    assert report_error(SpecbenchError("a [b] [/] c")) == 2
    assert lines(capsys) == ["error: a [b] [/] c"]
    assert report_error(CellsFailed("1 cell(s) failed")) == 1
    with pytest.raises(RuntimeError):
        report_error(RuntimeError("a bug is a traceback"))
