"""The power sampler: a daemon thread that reads a source at a fixed rate (≥ 1 Hz) between
a window's edges, for the cross-check of the counters against power × time.

It runs off the event loop and off the per-request path: a slow or failing source delays
only this thread. Each reading, and each failure, goes to a callback; nothing is raised
into the caller's loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from specbench.energy.reading import EnergySource, Reading, ReasonCode, TelemetryUnavailable

#: Slowest rate the cross-check allows: one reading a second.
MAX_INTERVAL_S = 1.0

OnReading = Callable[[Reading], None]
#: (when, `time.perf_counter()` seconds; reason code; message).
OnError = Callable[[float, ReasonCode, str], None]


class PowerSampler:
    """Reads `source` every `interval_s` seconds from `start()` until `stop()`.

    Readings keep to a fixed schedule (the k-th at start + k × interval), so a slow read
    shortens the next wait instead of drifting the rate; a read that outlasts an interval
    skips the slots it missed.
    """

    def __init__(
        self,
        source: EnergySource,
        on_reading: OnReading,
        on_error: OnError,
        interval_s: float = 0.5,
    ) -> None:
        if not 0 < interval_s <= MAX_INTERVAL_S:
            raise ValueError(
                f"interval_s must be in (0, {MAX_INTERVAL_S:g}] seconds (≥ 1 Hz), not {interval_s}"
            )
        self.source = source
        self.on_reading = on_reading
        self.on_error = on_error
        self.interval_s = interval_s
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.callback_error: BaseException | None = None

    def start(self) -> None:
        """Start sampling on a daemon thread (once)."""
        if self.thread is not None:
            raise RuntimeError("a PowerSampler starts once")
        self.thread = threading.Thread(target=self.run, name="power-sampler", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Stop and join the thread (it ends after the read under way, if any).

        Re-raises what a callback raised (writing the log failed, say), which ended sampling.
        """
        self.stopping.set()
        if self.thread is not None:
            self.thread.join()
        if self.callback_error is not None:
            raise self.callback_error

    def run(self) -> None:
        """The thread's loop: read, hand over, wait for the next slot."""
        started = time.perf_counter()
        slot = 0
        while not self.stopping.is_set():
            try:
                self.sample_once()
            except BaseException as error:  # noqa: BLE001 - no caller on this thread to raise to
                self.callback_error = error
                return
            elapsed = time.perf_counter() - started
            slot = max(slot + 1, int(elapsed / self.interval_s) + 1)
            self.stopping.wait(started + slot * self.interval_s - time.perf_counter())

    def sample_once(self) -> None:
        """One read, to on_reading, or its failure to on_error."""
        try:
            reading = self.source.read()
        except TelemetryUnavailable as error:
            self.on_error(time.perf_counter(), error.reason, str(error))
            return
        except Exception as error:  # noqa: BLE001 - a library's own fault must not end the cell
            self.on_error(time.perf_counter(), "unavailable", f"{type(error).__name__}: {error}")
            return
        self.on_reading(reading)
