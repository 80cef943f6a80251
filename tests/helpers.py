"""Helpers every test layer shares: the one way tests run the `specbench` CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

#: The checkout's root, wherever the test file that asks sits.
REPO = Path(__file__).resolve().parents[1]
#: The CLI as a subprocess argv prefix: the same interpreter, the checked-out package.
CLI = [sys.executable, "-m", "specbench.cli.main"]


def run_cli(
    *args: str | Path, timeout: float = 600, env: dict[str, str] | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """`specbench ARGS` to completion, output captured as text; never raises on exit codes."""
    return subprocess.run(
        [*CLI, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
        **kwargs,
    )


def popen_cli(*args: str | Path, **kwargs: Any) -> subprocess.Popen[str]:
    """`specbench ARGS` started in the background, stdout and stderr piped as text."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen([*CLI, *map(str, args)], text=True, **kwargs)
