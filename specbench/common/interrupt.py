"""SIGINT and SIGTERM, handled in one place: stop at the next safe point, never mid-callback.

`stop_on_signals()` (the CLI and a Slurm job wrap a command in it) installs one handler
for SIGTERM, and for SIGINT unless the process inherited SIGINT as ignored (`cmd &` from
a script): an ignored SIGINT stays ignored. The handler only records which signal came:

- while an event loop runs a task registered with `cancel_on_stop` (a cell's load), it
  cancels that task, thread-safely, at its next `await`: the `CancelledError` unwinds the
  cell, whose `summary.json` is never written, so the in-flight cell is discarded and a
  rerun measures it again. Raising from the handler there would land inside an I/O
  callback (uvloop's transport read), which the loop reports and swallows, and the
  request would be recorded as failed by the harness itself.
- outside an event loop (a server starting, the pause between cells), it raises
  `Interrupted` at once, as Python's own SIGINT does; the `with` blocks on the way stop
  the servers.

`check()` raises `Interrupted` once a signal came; the orchestrator calls it between cells
and a cell before it saves its summary, so no cell is ever saved with a request the stop
cut short; the closed loop asks `requested()` and sends no further request. The CLI maps
`Interrupted` to one "interrupted" line and exit 128 + signal (130 for SIGINT, 143 for
SIGTERM).
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

#: The signals that stop a run.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """A stop signal came: unwind to the CLI. A BaseException, so that no `except
    Exception` on the way (a cell's error handling) takes it for a failure and carries on."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


class _State:
    """What the handler knows: the signal received, and the task to cancel, if any."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.installed = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None


_state = _State()


def _handler(signum: int, frame: FrameType | None) -> None:
    if _state.signum is None:
        _state.signum = signum
    loop, task = _state.loop, _state.task
    if loop is not None and task is not None and not task.done():
        loop.call_soon_threadsafe(task.cancel)  # never raise inside the loop's callbacks
        return
    raise Interrupted(_state.signum)


def requested() -> int | None:
    """The stop signal received so far, or None."""
    return _state.signum


def check() -> None:
    """Raise `Interrupted` if a stop signal came (a safe point)."""
    if _state.signum is not None:
        raise Interrupted(_state.signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Install the stop handler for the block's duration (main thread only; nests as a no-op).

    A SIGINT ignored when the block starts stays ignored.
    """
    if _state.installed or threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {}
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) == signal.SIG_IGN:
            continue
        saved[signum] = signal.signal(signum, _handler)
    _state.installed = True
    _state.signum = None
    try:
        yield
    finally:
        for signum, previous in saved.items():
            signal.signal(signum, previous)
        _state.installed = False
        _state.loop = _state.task = None
        # The stop ends with the block (its Interrupted carries the signal on): a later
        # block in the same process, a test's or a library caller's, starts unstopped.
        _state.signum = None


@contextmanager
def cancel_on_stop(task: asyncio.Task[Any]) -> Iterator[None]:
    """While the block runs, a stop signal cancels `task` (the running loop's main task)."""
    previous = _state.loop, _state.task
    _state.loop, _state.task = task.get_loop(), task
    try:
        if _state.signum is not None:  # came before the task could be registered
            task.cancel()
        yield
    finally:
        _state.loop, _state.task = previous


def reset_for_tests() -> None:
    """Forget a received signal (tests that run several commands in one process)."""
    _state.signum = None
