"""The window poller against the emulator's app: fixed instants, one scrape for both uses
(the samples file and the live AL's snapshot), and a lost poll that leaves only a gap."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import aiohttp
from harness import free_port, in_process_emulator

from specbench.emulator import make_emulator_config
from specbench.measure.window_poll import WindowPoller
from specbench.metrics.prometheus import REQUESTS_RUNNING, SPEC_DRAFTS, MetricsSnapshot
from specbench.store.window_samples import read_window_samples


async def _poll_for(poller: WindowPoller, seconds: float) -> None:
    task = asyncio.create_task(poller.run(time.perf_counter_ns()))
    await asyncio.sleep(seconds)
    task.cancel()
    await asyncio.wait([task])
    assert task.cancelled()  # it ran until cancelled, whatever it met
    poller.close()


async def test_polls_land_at_fixed_instants_in_the_file_and_in_the_live_callback(
    tmp_path: Path,
) -> None:
    config = make_emulator_config(step_ms=5.0, num_speculative_tokens=3)
    seen: list[MetricsSnapshot] = []
    path = tmp_path / "window_samples.jsonl"
    async with in_process_emulator(config) as (base, session):
        body = {"model": config.model, "prompt": "p", "max_tokens": 400}
        running = [
            asyncio.create_task(session.post(f"{base}/v1/completions", json=body)) for _ in range(3)
        ]
        poller = WindowPoller(session, base, None, path, seen.append, interval_s=0.05)
        await _poll_for(poller, 0.235)
        for task in running:
            (await task).close()
    # Instants 0.05, 0.10, 0.15, 0.20 (a slow poll on a busy machine skips one, never
    # bunches the next ones up): none at the window's first instant.
    times = [sample.t_s for sample in poller.samples]
    assert 3 <= len(times) <= 4, times
    assert times[0] > 0.045 and all(b - a > 0.03 for a, b in itertools.pairwise(times)), times
    assert read_window_samples(path) == poller.samples
    assert {s.num_requests_running for s in poller.samples} == {3}
    assert {s.num_requests_waiting for s in poller.samples} == {0}
    # The live AL got each poll's snapshot, with the counters it reads.
    assert len(seen) == len(times)
    assert all(s.get(REQUESTS_RUNNING) == 3.0 for s in seen)
    assert [s.get(SPEC_DRAFTS) for s in seen] == sorted(s.get(SPEC_DRAFTS) for s in seen)
    assert seen[-1].get(SPEC_DRAFTS) > 0  # type: ignore[operator]


async def test_an_unreachable_server_leaves_gaps_never_an_error(tmp_path: Path) -> None:
    path = tmp_path / "window_samples.jsonl"
    async with aiohttp.ClientSession() as session:
        poller = WindowPoller(
            session, f"http://127.0.0.1:{free_port()}", None, path, interval_s=0.05
        )
        await _poll_for(poller, 0.18)
    assert poller.samples == []
    assert path.read_bytes() == b""
