"""Measure one cell: warm up, scrape when idle, run the load, scrape when idle, store.

Files land in the cell's folder in this order: `metrics_before.prom`, `requests.jsonl`
(appended per request), `metrics_after.prom`, then `summary.json` atomically, last: its
presence is what marks the cell complete, so a crash at any point leaves a cell that a
rerun measures again, and loses at most the requests in flight.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import aiohttp

from specbench import store
from specbench.client import Api, Sender
from specbench.data.conversation import Conversation
from specbench.endpoint import reset_prefix_cache, scrape_when_idle
from specbench.errors import ServerError
from specbench.load import run_closed_loop
from specbench.records import RequestRecord
from specbench.summarize import CellContext, summarize_cell
from specbench.summary import CellSummary


@dataclass(frozen=True, slots=True)
class CellSpec:
    """One cell: which server, workload and load level, and how requests are sent."""

    label: str
    dataset: str
    category: str | None
    concurrency: int
    repeat: int
    gpus: int
    model: str
    endpoint: str
    api: Api
    client: str
    max_tokens: int
    temperature: float
    warmup: int
    save_outputs: bool


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class CellProgress:
    """Receives each finished record; the CLI subclasses it to draw a progress bar."""

    def start(self, spec: CellSpec, total_conversations: int) -> None:
        """Called once the window opens."""

    def record(self, record: RequestRecord) -> None:
        """Called when a measured request ends."""

    def stop(self) -> None:
        """Called when the window closes (also on errors)."""


async def measure_cell(
    spec: CellSpec,
    conversations: Sequence[Conversation],
    session: aiohttp.ClientSession,
    sender: Sender,
    directory: Path,
    *,
    api_key: str | None = None,
    progress: CellProgress | None = None,
    on_window_open: Callable[[], None] | None = None,
) -> CellSummary:
    progress = progress or CellProgress()
    if spec.warmup > 0:
        warmup = [conversations[i % len(conversations)] for i in range(spec.warmup)]
        await run_closed_loop(
            warmup,
            min(spec.concurrency, len(warmup)),
            sender,
            spec.api,
            lambda _record: None,
            window_start_ns=time.perf_counter_ns(),
        )
    # Prompts repeat across cells: a warm prefix cache would flatter TTFT (best effort).
    await reset_prefix_cache(session, spec.endpoint, api_key)
    before = await scrape_when_idle(session, spec.endpoint, api_key)
    store.write_atomic(directory / store.METRICS_BEFORE, before.text)

    records: list[RequestRecord] = []
    writer = store.RecordWriter(directory / store.REQUESTS)

    def on_record(record: RequestRecord) -> None:
        if not spec.save_outputs:
            record.output_text = None
            record.output_token_ids = None
        records.append(record)
        writer.write(record)
        progress.record(record)

    started_at = utc_now()
    if on_window_open:
        on_window_open()
    progress.start(spec, len(conversations))
    window_start = time.perf_counter_ns()
    try:
        window_end = await run_closed_loop(
            conversations,
            spec.concurrency,
            sender,
            spec.api,
            on_record,
            window_start_ns=window_start,
        )
    finally:
        writer.close()
        progress.stop()
    finished_at = utc_now()

    if records and all(not r.ok for r in records):
        first = records[0]
        raise ServerError(
            f"all {len(records)} requests failed; first: {first.error_type}: {first.error_message}"
        )
    after = await scrape_when_idle(session, spec.endpoint, api_key)
    store.write_atomic(directory / store.METRICS_AFTER, after.text)
    context = CellContext(
        label=spec.label,
        dataset=spec.dataset,
        category=spec.category,
        concurrency=spec.concurrency,
        repeat=spec.repeat,
        gpus=spec.gpus,
        model=spec.model,
        endpoint=spec.endpoint,
        api=spec.api,
        client=spec.client,
        max_tokens=spec.max_tokens,
        temperature=spec.temperature,
        started_at=started_at,
        finished_at=finished_at,
        duration_s=(window_end - window_start) / 1e9,
    )
    summary = summarize_cell(records, before.snapshot, after.snapshot, context)
    store.write_json(directory / store.SUMMARY, summary)
    return summary
