"""Measure one cell: warm up, scrape when idle, run the load, scrape when idle, store.

Files land in the cell's folder in this order: `metrics_before.prom`, `energy.jsonl` (its
header and before reading, then power samples), `requests.jsonl` (appended per request)
beside `window_samples.jsonl` (appended per `/metrics` poll), `metrics_after.prom`, the
after reading, then `summary.json` atomically, last: its presence is what marks the cell
complete, so a crash at any point leaves a cell that a rerun measures again, and loses at
most the requests in flight.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from specbench import store
from specbench.client.control import reset_prefix_cache, scrape_when_idle
from specbench.client.record import RequestRecord
from specbench.client.sender import Sender
from specbench.common import interrupt
from specbench.common.errors import ServerError
from specbench.data.conversation import Conversation
from specbench.measure.checks import invalid_cell
from specbench.measure.energy import CellEnergy, EnergyMeter
from specbench.measure.history import Replay, replay_for
from specbench.measure.loop import run_closed_loop
from specbench.measure.precision import StoppingRule, stratified_order
from specbench.measure.summarize import CellSpec, PrefixCacheOutcome, Window, summarize_cell
from specbench.measure.window_poll import WindowPoller
from specbench.metrics.acceptance import acceptance_length
from specbench.metrics.prometheus import (
    SPEC_ACCEPTED,
    SPEC_DRAFTS,
    MetricsSnapshot,
    check_same_server,
)
from specbench.store.failure import FailureRecord, write_failure
from specbench.store.manifest import utc_now
from specbench.store.summary import CellSummary


@dataclass(frozen=True, slots=True)
class CellOutcome:
    """A cell's fate: measured now, skipped as already complete, or failed (error set)."""

    summary: CellSummary | None
    skipped: bool = False
    error: str | None = None


class CellProgress:
    """Receives a cell's events; the CLI subclasses it to draw progress bars."""

    def start(self, spec: CellSpec, total_conversations: int) -> None:
        """Called once the window opens."""

    def record(self, record: RequestRecord) -> None:
        """Called when a measured request ends."""

    def acceptance(self, acceptance_length: float) -> None:
        """Called with the AL so far, from each window poll (`measure.window_poll`)."""

    def precision(self, worst: float | None, conversations: int) -> None:
        """Called after a precision check: the largest relative CI half-width so far."""

    def stop(self) -> None:
        """Called when the window closes (also on errors)."""


async def run_cell(
    spec: CellSpec,
    conversations: Sequence[Conversation],
    session: aiohttp.ClientSession,
    sender: Sender,
    directory: Path,
    *,
    force: bool = False,
    api_key: str | None = None,
    progress: CellProgress | None = None,
    failure_details: Callable[[], Awaitable[dict[str, Any]]] | None = None,
    energy: EnergyMeter | None = None,
) -> CellOutcome:
    """Skip a complete cell (unless `force`), else measure it; ServerError → `failure.json`."""
    if store.is_complete(directory) and not force:
        return CellOutcome(summary=store.read_summary(directory), skipped=True)
    (directory / store.FAILURE).unlink(missing_ok=True)
    # A cell measured again (`force`) is incomplete until its new summary lands: the old
    # summary never stands beside the new attempt's records, whatever stops the attempt.
    # A summary that cannot be removed stops the run here, before anything is written.
    (directory / store.SUMMARY).unlink(missing_ok=True)
    try:
        summary = await measure_cell(
            spec,
            conversations,
            session,
            sender,
            directory,
            api_key=api_key,
            progress=progress,
            energy=energy,
        )
    except ServerError as error:
        details = await failure_details() if failure_details else {}
        write_failure(
            directory,
            FailureRecord(
                error_type=type(error).__name__, message=str(error), at=utc_now(), **details
            ),
        )
        return CellOutcome(summary=None, error=str(error))
    return CellOutcome(summary=summary)


async def measure_cell(
    spec: CellSpec,
    conversations: Sequence[Conversation],
    session: aiohttp.ClientSession,
    sender: Sender,
    directory: Path,
    *,
    api_key: str | None = None,
    progress: CellProgress | None = None,
    energy: EnergyMeter | None = None,
) -> CellSummary:
    """Warm up, reset the prefix cache, scrape, run the window, scrape, summarize, store.

    With an `energy` meter, each counted GPU's energy counter is read right after each
    scrape and power is sampled between them (`measure.energy`).
    """
    meter = CellEnergy(energy, directory) if energy is not None else None
    try:
        return await _measure(
            spec, conversations, session, sender, directory, api_key, progress, meter
        )
    finally:
        if meter is not None:
            meter.close()


async def _measure(
    spec: CellSpec,
    conversations: Sequence[Conversation],
    session: aiohttp.ClientSession,
    sender: Sender,
    directory: Path,
    api_key: str | None,
    progress: CellProgress | None,
    energy: CellEnergy | None,
) -> CellSummary:
    progress = progress or CellProgress()
    replay = replay_for(spec.settings.history, spec.settings.tokenizer)
    await _warm_up(spec, conversations, sender, replay)
    prefix_cache = await _reset_prefix_cache(spec, session, api_key)
    before = await scrape_when_idle(session, spec.endpoint, api_key)
    store.write_atomic(directory / store.METRICS_BEFORE, before.text)
    if energy is not None:
        await energy.edge("before")
        energy.start_sampling()

    records: list[RequestRecord] = []
    writer = store.RecordWriter(directory / store.REQUESTS)
    # Precision checks run off the event loop: a stalled loop would stretch every request.
    checks = ThreadPoolExecutor(max_workers=1, thread_name_prefix="precision-check")
    rule, order = _stopping_rule(spec, conversations, checks)
    on_record = _record_sink(spec, records, writer, progress, rule)

    started_at = utc_now()
    progress.start(spec, len(conversations))
    poller = WindowPoller(
        session,
        spec.endpoint,
        api_key,
        directory / store.WINDOW_SAMPLES,
        _live_acceptance(before.snapshot, progress),
    )
    window_start = time.perf_counter_ns()
    polling = asyncio.create_task(poller.run(window_start))
    try:
        window_end = await run_closed_loop(
            order,
            spec.concurrency,
            sender,
            spec.settings.api,
            on_record,
            window_start_ns=window_start,
            replay=replay,
            should_stop=rule.should_stop if rule is not None else None,
        )
    finally:
        polling.cancel()
        try:
            await asyncio.wait([polling])  # raises only if this task is cancelled meanwhile
        finally:
            checks.shutdown(wait=True, cancel_futures=True)
            writer.close()
            progress.stop()
            poller.close()
    poll_error = None if polling.cancelled() else polling.exception()
    if poll_error is not None:  # window_samples.jsonl could not be written (a full disk)
        raise poll_error
    finished_at = utc_now()

    _check_requests(records)
    after = await scrape_when_idle(session, spec.endpoint, api_key)
    store.write_atomic(directory / store.METRICS_AFTER, after.text)
    if energy is not None:
        await energy.edge("after")  # stops the sampler first
    window = Window(
        started_at=started_at,
        finished_at=finished_at,
        duration_s=(window_end - window_start) / 1e9,
    )
    check_same_server(before.snapshot, after.snapshot)  # a restart inside the window
    summary = summarize_cell(
        records, before.snapshot, after.snapshot, spec, window, prefix_cache, poller.samples
    )
    if energy is not None:
        summary = summary.model_copy(
            update={"energy": energy.summary(summary.server_generation_tokens)}
        )
    problem = invalid_cell(summary)
    if problem is not None:
        raise ServerError(problem)
    # A stop signal during the window may have cut a request short: never save such a cell.
    interrupt.check()
    store.write_json(directory / store.SUMMARY, summary)
    return summary


async def _warm_up(
    spec: CellSpec, conversations: Sequence[Conversation], sender: Sender, replay: Replay
) -> None:
    """`spec.warmup` conversations (cycling through the workload's), never recorded."""
    if spec.warmup <= 0:
        return
    warmup = [conversations[i % len(conversations)] for i in range(spec.warmup)]
    await run_closed_loop(
        warmup,
        min(spec.concurrency, len(warmup)),
        sender,
        spec.settings.api,
        lambda _record: None,
        window_start_ns=time.perf_counter_ns(),
        replay=replay,
    )


async def _reset_prefix_cache(
    spec: CellSpec, session: aiohttp.ClientSession, api_key: str | None
) -> PrefixCacheOutcome:
    """Prompts repeat across cells: a warm prefix cache would flatter TTFT and E2E. The
    reset waits for idle and is checked; a refusal is recorded, never hidden."""
    if not spec.reset_prefix_cache:
        return PrefixCacheOutcome(reset=None, detail="not attempted: prefix caching off")
    reset = await reset_prefix_cache(session, spec.endpoint, api_key)
    return PrefixCacheOutcome(reset=reset.success, detail=reset.detail)


def _record_sink(
    spec: CellSpec,
    records: list[RequestRecord],
    writer: store.RecordWriter,
    progress: CellProgress,
    rule: StoppingRule | None,
) -> Callable[[RequestRecord], None]:
    """What happens to each measured request's record: trimmed (unless outputs are saved),
    kept, appended to `requests.jsonl`, shown, and given to the stopping rule."""

    def on_record(record: RequestRecord) -> None:
        if not spec.settings.keeps_outputs:
            record.output_text = None
            record.output_token_ids = None
            record.reasoning_text = None
        records.append(record)
        writer.write(record)
        progress.record(record)
        if rule is not None:
            checks = rule.checks
            rule.observe(record)
            if rule.checks != checks:
                progress.precision(rule.worst(), rule.completed)

    return on_record


def _check_requests(records: Sequence[RequestRecord]) -> None:
    """ServerError when every request failed, or when the server rejected any as invalid."""
    if records and all(not r.ok for r in records):
        first = records[0]
        raise ServerError(
            f"all {len(records)} requests failed; first: {first.error_type}: {first.error_message}"
        )
    rejected = [r for r in records if r.error_type == "http_400"]
    if rejected:
        # A 400 is the request's fault (e.g. prompt + max_tokens over the context window):
        # figures over the remaining requests would silently describe another workload.
        raise ServerError(
            f"the server rejected {len(rejected)} of {len(records)} requests as invalid: "
            f"{rejected[0].error_message}"
        )


def _stopping_rule(
    spec: CellSpec, conversations: Sequence[Conversation], executor: Executor
) -> tuple[StoppingRule | None, Sequence[Conversation]]:
    """A precision-targeted cell's rule and stratified order; else none and the given order."""
    if spec.precision is None:
        return None, conversations
    rule = StoppingRule(
        spec.precision, spec.min_conversations, spec.concurrency, spec.order_seed, executor
    )
    return rule, stratified_order(conversations, spec.order_seed)


def _live_acceptance(
    before: MetricsSnapshot, progress: CellProgress
) -> Callable[[MetricsSnapshot], None] | None:
    """What each window poll does for the progress bar: show the AL so far (display only,
    never part of any figure); None when the server does not speculate."""
    if not before.has_spec_decode:
        return None
    start_drafts = before.get(SPEC_DRAFTS) or 0.0
    start_accepted = before.get(SPEC_ACCEPTED) or 0.0

    def show(now: MetricsSnapshot) -> None:
        drafts = round((now.get(SPEC_DRAFTS) or 0.0) - start_drafts)
        accepted = round((now.get(SPEC_ACCEPTED) or 0.0) - start_accepted)
        if drafts > 0 and accepted >= 0:
            al = acceptance_length(accepted, drafts)
            if al is not None:
                progress.acceptance(al)

    return show
