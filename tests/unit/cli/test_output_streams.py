"""Which stream the CLI writes to: help and the version on stdout, exit 0, nothing on stderr."""

from __future__ import annotations

import pytest
from harness import run_cli

from specbench import __version__


def test_version_prints_the_package_version_on_stdout() -> None:
    result = run_cli("--version", timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"specbench {__version__}\n" and result.stderr == ""


@pytest.mark.parametrize("group", [(), ("data",), ("export",), ("baseline",)])
def test_a_command_group_alone_prints_its_help_and_exits_0(group: tuple[str, ...]) -> None:
    result = run_cli(*group, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert " ".join(("main", *group, "[OPTIONS] COMMAND")) in " ".join(result.stdout.split())
    assert result.stdout == run_cli(*group, "--help", timeout=60).stdout


def test_a_command_missing_its_argument_is_still_a_usage_error() -> None:
    result = run_cli("gate", timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: Missing argument 'results_dir'")
