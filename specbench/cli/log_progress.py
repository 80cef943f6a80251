"""Progress as log lines, for a stderr that is not a terminal (CI, `run … > log 2>&1`).

A live bar redrawn in place means nothing in a log file: it leaves a blank line per cell and
the campaign bar once at the end, so a multi-hour nightly looks hung. Here each finished cell
is one line (its key, requests, tok/s, AL, elapsed, and the campaign's ETA), and a cell still
running prints a heartbeat line at most every `heartbeat_s` (60 s by default;
`SPECBENCH_HEARTBEAT_S` changes it). No blank lines.
"""

from __future__ import annotations

import os
import threading
import time

from rich.console import Console

from specbench.cli.lines import line, plain
from specbench.client.record import RequestRecord
from specbench.measure.cell import CellOutcome, CellProgress, CellSpec
from specbench.run.orchestrator import RunProgress
from specbench.store.summary import CellSummary
from specbench.suite import Cell

#: The default gap between two heartbeat lines of one running cell, in seconds.
HEARTBEAT_S = 60.0


def heartbeat_interval() -> float:
    """`SPECBENCH_HEARTBEAT_S` when it is a positive number, else 60 s."""
    try:
        value = float(os.environ.get("SPECBENCH_HEARTBEAT_S", HEARTBEAT_S))
    except ValueError:
        return HEARTBEAT_S
    return value if value > 0 else HEARTBEAT_S


def duration(seconds: float) -> str:
    """`42 s`, `3m05s`, `2h07m`: short enough for a log line, exact enough for an ETA."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _rate(summary: CellSummary) -> str:
    if summary.output_tok_s_per_gpu is not None:
        return f"{summary.output_tok_s_per_gpu:,.1f} tok/s/GPU"
    return f"{summary.output_tok_s:,.1f} tok/s/server"


def cell_line(summary: CellSummary) -> str:
    """What one finished cell measured: requests (failed), tok/s and, when it speculates, AL."""
    spec = summary.spec_decode
    al = f", AL {spec.acceptance_length:.2f}" if spec and spec.acceptance_length else ""
    return f"{summary.num_requests} requests ({summary.num_failed} failed), {_rate(summary)}{al}"


class LogCellProgress(CellProgress):
    """A cell's heartbeat: one line every `interval` seconds while its window is open."""

    def __init__(self, console: Console, key: str, interval: float) -> None:
        self._console = console
        self._key = key
        self._interval = interval
        self._total = 0
        self._done = 0
        self._tokens = 0
        self._start = 0.0
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, spec: CellSpec, total_conversations: int) -> None:
        self._total = total_conversations
        self._start = time.monotonic()
        # A thread, not the event loop: a heartbeat must come even while no request ends.
        self._thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
        self._thread.start()

    def record(self, record: RequestRecord) -> None:
        self._tokens += record.output_tokens or 0
        self._done += record.turn + 1 == record.num_turns

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()

    def _beat(self) -> None:
        while not self._stopped.wait(self._interval):
            elapsed = time.monotonic() - self._start
            self._console.print(
                plain(
                    f"... {self._key}: {self._done}/{self._total} conversations, "
                    f"{self._tokens / max(elapsed, 1e-9):,.0f} tok/s, {duration(elapsed)} so far"
                ),
                soft_wrap=True,
            )


class LogRunProgress(RunProgress):
    """The campaign as log lines: server events, warnings, one line per cell with the ETA."""

    def __init__(self, console: Console, *, heartbeat_s: float | None = None) -> None:
        self._console = console
        self._heartbeat_s = heartbeat_s or heartbeat_interval()
        self._start = time.monotonic()
        self._cell_start = self._start
        self._total = 0
        self._to_measure = 0
        self._finished = 0
        self._measured_s = 0.0

    def __enter__(self) -> LogRunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def begin(self, total: int, complete: int) -> None:
        self._total = total
        self._to_measure = total - complete
        self._start = time.monotonic()

    def more(self, cells: int) -> None:
        self._total += cells
        self._to_measure += cells

    def server(self, name: str, message: str) -> None:
        self._console.print(line(f"server {name}:", "cyan", message), soft_wrap=True)

    def warn(self, message: str) -> None:
        self._console.print(line("warning:", "yellow", message), soft_wrap=True)

    def cell(self, cell: Cell) -> CellProgress:
        self._cell_start = time.monotonic()
        return LogCellProgress(self._console, cell.key, self._heartbeat_s)

    def cell_done(self, cell: Cell, outcome: CellOutcome) -> None:
        if outcome.skipped:
            self._console.print(plain(f"skip {cell.key}: already complete", "dim"))
            return
        self._finished += 1
        now = time.monotonic()
        self._measured_s += now - self._cell_start
        where = f"cell {self._finished}/{self._to_measure}"
        left = self._to_measure - self._finished
        eta = self._measured_s / self._finished * left
        timing = f"{duration(now - self._cell_start)}; campaign {duration(now - self._start)}"
        timing += f", eta {duration(eta)}" if left else ", done"
        if outcome.error:  # the same line a terminal gets: tests and scripts grep for it
            self._console.print(
                line("failed", "red", f"{cell.key}: {outcome.error}"), soft_wrap=True
            )
            self._console.print(plain(f"{where}: {timing}"), soft_wrap=True)
        elif outcome.summary is not None:
            message = f"{cell.key}: {cell_line(outcome.summary)}, {timing}"
            self._console.print(line(where, "green", message), soft_wrap=True)
