"""From a plan's cell to what `measure.run_cell` needs: its folder, conversations, spec, sender.

Pure construction: nothing here sends a request or writes a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import aiohttp

from specbench import store
from specbench.client.sender import AiohttpSender, RequestSettings, Sender
from specbench.data.conversation import Conversation
from specbench.launch.argv import prefix_caching_off
from specbench.measure.precision import default_floor, stratified_order
from specbench.measure.summarize import CellSpec
from specbench.run.plan import PlanServer
from specbench.suite.model import Cell, WorkloadSpec

#: Extra warmup conversations for the first cell of a freshly started server, so one-off
#: compilation and autotuning stay out of the measured window.
FIRST_CELL_EXTRA_WARMUP = 8


def cell_directory(output: Path, cell: Cell) -> Path:
    """The cell's folder under the results directory `output`."""
    return store.cell_path(
        output,
        store.CellKey(
            cell.server, cell.workload, cell.concurrency, cell.repeat, launch=cell.launch
        ),
    )


def complete_cells(output: Path, cells: Sequence[Cell]) -> frozenset[Cell]:
    """The `cells` with a summary in `output` (a rerun measures them again only with --force)."""
    return frozenset(c for c in cells if store.is_complete(cell_directory(output, c)))


def cell_conversations(
    cell: Cell, workload: WorkloadSpec, conversations: Sequence[Conversation]
) -> Sequence[Conversation]:
    """What `cell` measures: every conversation, or a pilot cell's first N (stratified)."""
    if cell.conversations is None:
        return conversations
    return stratified_order(conversations, workload.seed)[: cell.conversations]


def cell_spec(
    server: PlanServer,
    cell: Cell,
    workload: WorkloadSpec,
    model: str,
    base_url: str,
    *,
    first: bool,
    conversations: Sequence[Conversation] = (),
) -> CellSpec:
    """How one cell is measured and labelled in its summary (its workload's settings whole)."""
    floor = workload.min_conversations or default_floor(conversations)
    return CellSpec(
        label=server.name,
        workload=cell.workload,
        settings=workload,
        concurrency=cell.concurrency,
        repeat=cell.repeat,
        launch=cell.launch,
        gpus=server.gpus,
        model=model,
        endpoint=base_url,
        warmup=workload.warmup + (FIRST_CELL_EXTRA_WARMUP if first else 0),
        reset_prefix_cache=not prefix_caching_off(server.config),
        min_conversations=floor if workload.precision_at(cell.concurrency) is not None else 0,
        conversations_available=len(conversations),
    )


def make_sender(
    workload: WorkloadSpec,
    session: aiohttp.ClientSession,
    base_url: str,
    model: str,
    api_key: str | None,
    max_connections: int,
) -> Sender:
    """The aiohttp hot path, or the official openai SDK (`client = "openai"`)."""
    settings = RequestSettings(
        model=model,
        api=workload.api,
        max_tokens=workload.max_tokens,
        temperature=workload.temperature,
        ignore_eos=workload.ignore_eos,
        return_token_ids=workload.per_chunk_usage,
        per_chunk_usage=workload.per_chunk_usage,
        extra_body=dict(workload.extra_body),
    )
    if workload.client == "openai":
        from specbench.client.openai_sender import OpenAISender

        return OpenAISender(
            base_url,
            settings,
            api_key=api_key,
            request_timeout_s=workload.request_timeout_s,
            max_connections=max_connections,
        )
    return AiohttpSender(
        session, base_url, settings, api_key=api_key, request_timeout_s=workload.request_timeout_s
    )
