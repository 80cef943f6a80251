"""Poll `/metrics` through a cell's measured window: the one scraper inside the window.

Each poll becomes a `WindowSample` (requests running and waiting), appended to the cell's
`window_samples.jsonl` as it arrives, and its parsed snapshot goes to `on_scrape` (the
progress bar's live AL): two uses, one scrape. The window's figures still come from the
two scrapes at its edges; these polls add only what an edge cannot see, the running
batch over time (`metrics.load.running_batch`). A failed poll leaves a gap, never fails
the cell.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp

from specbench.client.control import scrape
from specbench.common.errors import SpecbenchError
from specbench.metrics.prometheus import (
    REQUESTS_RUNNING,
    REQUESTS_WAITING,
    SPEC_ACCEPTED,
    SPEC_DRAFTS,
    MetricsSnapshot,
)
from specbench.store.window_samples import WindowSample, WindowSampleWriter

#: Seconds between polls. Each costs the server one render of its whole exposition (vLLM
#: ~55 KB, rendered by the API server beside the streams it serves) and the client about
#: 0.3 ms of parsing (`select_series`), so 4 a second is a light load. At the former live-AL
#: interval (2 s) an emulator cell of 2–5 s would get 1 to 3 samples, too few to weigh;
#: at 0.25 s it gets 8 to 20. A decode step lasts 10–100 ms, so no poll rate resolves
#: single steps: the mean is over time, not over steps.
POLL_INTERVAL_S = 0.25
#: What a poll reads: the scheduler's gauges and the live AL's two counters.
POLLED_SERIES = (REQUESTS_RUNNING, REQUESTS_WAITING, SPEC_DRAFTS, SPEC_ACCEPTED)


def _count(value: float | None) -> int | None:
    return None if value is None else round(value)


class WindowPoller:
    """Polls one endpoint at fixed instants from the window's start until cancelled."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        endpoint: str,
        api_key: str | None,
        path: Path,
        on_scrape: Callable[[MetricsSnapshot], None] | None = None,
        interval_s: float = POLL_INTERVAL_S,
    ) -> None:
        self._session = session
        self._endpoint = endpoint
        self._api_key = api_key
        self._on_scrape = on_scrape
        self._interval_ns = round(interval_s * 1e9)
        self._writer = WindowSampleWriter(path)
        #: The samples so far, in time order (also in the file).
        self.samples: list[WindowSample] = []

    async def run(self, window_start_ns: int) -> None:
        """Poll at window start + i × interval, i ≥ 1, until cancelled; a poll that overruns
        skips the instants it missed rather than bunching up after them.

        Not at i = 0: the window opens on an idle server (its edge scrape waited for
        idle), and a poll then, racing the first requests, saw 0 running and held that 0
        for a whole interval while the requests arrived within milliseconds (an emulator
        c = 16 cell read 13.7 instead of 15; c = 1 read 0.89).
        """
        await self._sleep_until_next(window_start_ns)
        while True:
            sent = time.perf_counter_ns()
            try:
                snapshot = (
                    await scrape(self._session, self._endpoint, self._api_key, POLLED_SERIES)
                ).snapshot
            except (SpecbenchError, aiohttp.ClientError, TimeoutError):
                # A poll is no figure's edge: a lost one leaves a gap (a body cut short
                # raises from aiohttp itself, past `scrape`'s wrapping of the request).
                snapshot = None
            received = time.perf_counter_ns()
            if snapshot is not None:
                # The server rendered the text somewhere between send and answer.
                sample = WindowSample(
                    t_s=((sent + received) // 2 - window_start_ns) / 1e9,
                    num_requests_running=_count(snapshot.get(REQUESTS_RUNNING)),
                    num_requests_waiting=_count(snapshot.get(REQUESTS_WAITING)),
                )
                self.samples.append(sample)
                self._writer.write(sample)
                if self._on_scrape is not None:
                    self._on_scrape(snapshot)
            await self._sleep_until_next(window_start_ns)

    async def _sleep_until_next(self, window_start_ns: int) -> None:
        now = time.perf_counter_ns()
        ticks = math.floor((now - window_start_ns) / self._interval_ns) + 1
        await asyncio.sleep((window_start_ns + ticks * self._interval_ns - now) / 1e9)

    def close(self) -> None:
        self._writer.close()
