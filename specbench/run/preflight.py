"""Checks that refuse a run before it spends server time: datasets, servers, workload fits.

Every failure here is bad input (`SpecbenchError`, one line, exit 2): a dataset that does
not load, an endpoint that does not answer as vLLM or serves another model, a workload whose
`max_tokens` the server's context cannot hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import aiohttp

from specbench.client.control import discover_model, scrape, server_version
from specbench.common.errors import ServerError, SpecbenchError
from specbench.data.context import check_context_fit
from specbench.data.loader import Workload, load_workload
from specbench.launch.live import LiveServer
from specbench.measure.checks import concurrency_warning
from specbench.run.plan import Plan, PlanServer
from specbench.suite.model import Cell, WorkloadSpec, output_fit_error


def load_plan_workload(spec: WorkloadSpec, key: str) -> Workload:
    """A workload's conversations, loaded and validated: every bad dataset is one line.

    `run` calls it for every workload with missing cells before any server starts, and
    the Slurm submitter before any sbatch, so bad data costs no model load.
    """
    loaded = load_workload(
        spec.dataset,
        revision=spec.dataset_revision,
        categories=spec.categories or (),
        entropy_tiers=spec.entropy_tiers or (),
        num_prompts=spec.num_prompts,
        seed=spec.seed,
        strict=spec.strict,
    )
    if spec.min_conversations is not None and spec.min_conversations > len(loaded.conversations):
        raise SpecbenchError(
            f"workload {key!r}: min_conversations = {spec.min_conversations} is more "
            f"than its {len(loaded.conversations)} conversations"
        )
    return loaded


def load_workloads(plan: Plan, cells: Iterable[Cell]) -> dict[int, Workload]:
    """The workloads of `cells`, each loaded once, in plan order (workload index → rows)."""
    loaded: dict[int, Workload] = {}
    for cell in cells:
        index = cell.workload_index
        if index not in loaded:
            loaded[index] = load_plan_workload(plan.workloads[index], plan.keys[index])
    return loaded


@dataclass(frozen=True)
class Serving:
    """What a server answered before its first cell."""

    model: str
    vllm_version: str | None
    max_model_len: int | None


async def check_serving(
    session: aiohttp.ClientSession, server: PlanServer, live: LiveServer, api_key: str | None
) -> Serving:
    """The server serves /metrics and the expected model; what it serves."""
    try:
        # Without /metrics there is no acceptance: fail before any request is sent.
        await scrape(session, live.base_url, api_key)
        served = await discover_model(session, live.base_url, api_key)
    except ServerError as error:
        if live.process is not None:
            raise
        # A server the user pointed at: unreachable is bad input, not a failed cell.
        raise SpecbenchError(str(error)) from None
    if live.process is None and server.config is not None and served["id"] != live.model:
        raise SpecbenchError(
            f"--endpoint {server.name}={server.endpoint}: serves {served['id']!r}, "
            f"not {live.model!r}"
        )
    model = live.model or str(served["id"])
    version = await server_version(session, live.base_url, api_key)
    max_model_len = served.get("max_model_len")
    if not isinstance(max_model_len, int) and server.config is not None:
        max_model_len = server.config.max_model_len
    return Serving(model, version, max_model_len if isinstance(max_model_len, int) else None)


def workload_fit(
    plan: Plan,
    server: PlanServer,
    base_url: str,
    cell: Cell,
    cells: Sequence[Cell],
    workload: Workload,
    max_model_len: int | None,
) -> list[str]:
    """Before a workload's first cell on a server: refuse max_tokens ≥ max_model_len; warnings."""
    spec_w = plan.workloads[cell.workload_index]
    several = len(plan.servers) > 1 or len(plan.workloads) > 1
    where = f"{server.name} × {cell.workload}: " if several else ""
    error = output_fit_error(
        spec_w.max_tokens, max_model_len, field="max_tokens", server=f"{base_url} (/v1/models)"
    )
    if error:
        raise SpecbenchError(where + error)
    messages = [where + m for m in context_warnings(workload, max_model_len, spec_w)]
    levels = [c.concurrency for c in cells if c.workload_index == cell.workload_index]
    over = concurrency_warning(levels, len(workload.conversations))
    if over:
        messages.append(where + over)
    return messages


def context_warnings(workload: Workload, max_model_len: object, spec: WorkloadSpec) -> list[str]:
    """The workload's own warnings, plus a context-length check when the limit is known."""
    messages = list(workload.warnings)
    if isinstance(max_model_len, int) and max_model_len > 0:
        messages += check_context_fit(
            workload,
            max_model_len=max_model_len,
            max_tokens=spec.max_tokens,
            tokenizer=spec.tokenizer,
        )
    return messages
