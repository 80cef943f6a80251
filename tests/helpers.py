"""Helpers every test layer shares: the one way tests run the `specbench` CLI."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The checkout's root, wherever the test file that asks sits.
REPO = Path(__file__).resolve().parents[1]
#: The CLI as a subprocess argv prefix: the same interpreter, the checked-out package.
CLI = [sys.executable, "-m", "specbench.cli.main"]
#: What every `specbench` a test runs prints at: wide enough that no line the tests read
#: wraps, even with a checkout and tmp paths 150+ characters deep (tests/conftest.py sets it
#: for the whole session; run_cli and popen_cli also put it into an explicit env).
CONSOLE_ENV = {"SPECBENCH_CONSOLE_WIDTH": "500"}
#: Variables that would make rich write escape codes into captured output.
UNSET_CONSOLE_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def cli_env(env: dict[str, str] | None) -> dict[str, str] | None:
    """`env` (None: inherit, which conftest.py set up) with the fixed console unless it sets one."""
    if env is None:
        return None
    fixed = {name: value for name, value in env.items() if name not in UNSET_CONSOLE_ENV}
    return {**CONSOLE_ENV, **fixed}


def run_cli(
    *args: str | Path, timeout: float = 600, env: dict[str, str] | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """`specbench ARGS` to completion, output captured as text; never raises on exit codes."""
    return subprocess.run(
        [*CLI, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=cli_env(env),
        check=False,
        **kwargs,
    )


def popen_cli(*args: str | Path, **kwargs: Any) -> subprocess.Popen[str]:
    """`specbench ARGS` started in the background, stdout and stderr piped as text."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    kwargs["env"] = cli_env(kwargs.get("env"))
    return subprocess.Popen([*CLI, *map(str, args)], text=True, **kwargs)


@contextlib.contextmanager
def background_cli(*args: str | Path, **kwargs: Any) -> Iterator[subprocess.Popen[str]]:
    """`popen_cli(ARGS)` for the block; killed on the way out if it is still running."""
    process = popen_cli(*args, **kwargs)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()


@contextlib.contextmanager
def running_emulator(*args: str) -> Iterator[str]:
    """`specbench emulate ARGS` on a free port in its own process group; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [*CLI, "emulate", "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, "emulator exited"
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                assert time.monotonic() < deadline, "emulator never became healthy"
                time.sleep(0.05)
        yield base
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
