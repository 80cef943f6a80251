"""The `specbench` CLI as the tests run it: a subprocess or in process."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.waiting import wait_for
from harness.zygote import ZYGOTE
from specbench.cli.console import WIDTH_ENV

#: The checkout's root.
REPO = Path(__file__).resolve().parents[2]
#: The CLI as a subprocess argv prefix: the same interpreter, the checked-out package.
CLI = [sys.executable, "-m", "specbench.cli.main"]
#: What every `specbench` run here prints at: wide enough that no line read back wraps,
#: even with a checkout and tmp paths 150+ characters deep (tests/conftest.py sets it for
#: the whole test session; every run below puts it into the environment it passes).
CONSOLE_ENV = {WIDTH_ENV: "2000"}
#: Variables that would make rich write escape codes into captured output.
UNSET_CONSOLE_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
#: The deepest checkout a test's CLI text must read the same from (characters). Issue 22:
#: a line a test read wrapped from a clone in a 25-character `mktemp -d` folder.
DEEP_CHECKOUT = 170


def assert_fits_any_checkout(text: str, env: Mapping[str, str] | None = None) -> None:
    """Every line of `text` that prints this checkout's path would fit the fixed console
    width from a checkout DEEP_CHECKOUT characters deep, where rich would otherwise wrap it
    and a test reading it would pass or fail with where the checkout sits.

    Only the checkout's own path changes with the checkout (tmp paths do not), so the
    check runs on every CLI run of the session instead of a second run from a deep copy.
    Skipped where the run sets a width of its own (the console tests).
    """
    width = (env if env is not None else os.environ).get(WIDTH_ENV)
    if width != CONSOLE_ENV[WIDTH_ENV]:
        return
    root = str(REPO)
    deeper = max(0, DEEP_CHECKOUT - len(root))
    for line in text.splitlines():
        if root in line and len(line) + line.count(root) * deeper > int(width):
            raise AssertionError(
                f"a CLI line of {len(line)} characters prints the checkout's path "
                f"({len(root)} characters); from a checkout {DEEP_CHECKOUT} characters deep "
                f"it would pass the console's {width} columns and wrap: {line[:200]}..."
            )


def cli_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (None: this process's) with the fixed console unless it sets a width itself."""
    source = os.environ if env is None else env
    fixed = {name: value for name, value in source.items() if name not in UNSET_CONSOLE_ENV}
    return {**CONSOLE_ENV, **fixed}


def run_cli(
    *args: str | Path, timeout: float = 600, env: Mapping[str, str] | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """`specbench ARGS` to completion, output captured as text; never raises on exit codes
    (its lines are checked to read the same from any checkout: `assert_fits_any_checkout`).

    A fork of the test process's zygote (harness/zygote.py) where it can be one: the
    session's environment and no other subprocess option; a subprocess otherwise."""
    run_env = cli_env(env)
    argv = [str(arg) for arg in args]
    if not kwargs and ZYGOTE.usable(run_env):
        done = ZYGOTE.run(argv, run_env, timeout)
    else:
        done = subprocess.run(
            [*CLI, *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=run_env,
            check=False,
            **kwargs,
        )
    assert_fits_any_checkout(f"{done.stdout or ''}\n{done.stderr or ''}", run_env)
    return done


@dataclass(frozen=True)
class TerminalRun:
    """What a CLI run on a terminal printed (stdout and stderr, as the terminal got them,
    escape codes removed) and its exit status."""

    returncode: int
    output: str

    @property
    def lines(self) -> list[str]:
        return self.output.splitlines()


_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_on_terminal(*args: str | Path, columns: int, timeout: float = 300) -> TerminalRun:
    """`specbench ARGS` with stdout and stderr on a pseudo-terminal `columns` wide (COLUMNS;
    the session's fixed width removed), as a user at a terminal runs it."""
    import pty

    env = {k: v for k, v in os.environ.items() if k not in (WIDTH_ENV, *UNSET_CONSOLE_ENV)}
    env.update(COLUMNS=str(columns), LINES="50", TERM="xterm", NO_COLOR="1")
    env.pop("TERMINAL_WIDTH", None)
    parent, child = pty.openpty()
    try:
        process = subprocess.Popen([*CLI, *map(str, args)], stdout=child, stderr=child, env=env)
    finally:
        os.close(child)
    chunks: list[bytes] = []
    try:
        while True:
            try:
                data = os.read(parent, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        code = process.wait(timeout=timeout)
    finally:
        os.close(parent)
        if process.poll() is None:
            process.kill()
            process.wait()
    text = b"".join(chunks).decode("utf-8", errors="replace").replace("\r\n", "\n")
    return TerminalRun(code, _ESCAPE.sub("", text))


def popen_cli(*args: str | Path, **kwargs: Any) -> subprocess.Popen[str]:
    """`specbench ARGS` started in the background, stdout and stderr piped as text."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    kwargs["env"] = cli_env(kwargs.get("env"))
    return subprocess.Popen([*CLI, *map(str, args)], text=True, **kwargs)


@contextlib.contextmanager
def background_cli(*args: str | Path, **kwargs: Any) -> Iterator[subprocess.Popen[str]]:
    """`popen_cli(ARGS)` for the block; killed (and reaped) on the way out if it is still
    running."""
    process = popen_cli(*args, **kwargs)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def is_stopped(pid: int) -> bool:
    """Whether `pid` is stopped (SIGSTOP): its state in /proc, after the (command name)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2] in "Tt"


@contextlib.contextmanager
def paused(process: subprocess.Popen[str]) -> Iterator[None]:
    """`process` stopped (SIGSTOP) for the block and resumed (SIGCONT) after it: what it
    holds (a lock, a cell in flight) stays held however slowly the block runs."""
    process.send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: is_stopped(process.pid), 30)
        yield
    finally:
        process.send_signal(signal.SIGCONT)


@dataclass
class Outcome:
    """One finished `specbench`: its exit code (None: timed out) and what it printed."""

    code: int | None
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        """stderr's non-blank lines."""
        return [line for line in self.stderr.splitlines() if line.strip()]

    @property
    def last(self) -> str:
        return self.lines[-1] if self.lines else ""


def invoke_main(*args: str | Path) -> Outcome:
    """`specbench ARGS` in this process, through the same `main` the executable runs.

    For what is decided before any command body runs (argument parsing, option checks),
    where a subprocess would add only its interpreter start. The console and signal
    handlers are this process's; output is captured from sys.stdout and sys.stderr.
    """
    from specbench.cli.main import main

    stdout, stderr = io.StringIO(), io.StringIO()
    argv = ["specbench", *map(str, args)]
    code: int | None = 0
    with (
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        _patched_argv(argv),
    ):
        try:
            main()
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    assert_fits_any_checkout(f"{stdout.getvalue()}\n{stderr.getvalue()}")
    return Outcome(code, stdout.getvalue(), stderr.getvalue())


@contextlib.contextmanager
def _patched_argv(argv: list[str]) -> Iterator[None]:
    saved = sys.argv
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved


def one_line(stderr: str) -> str:
    """The last non-blank line of an error output."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines, "no message"
    return lines[-1]
