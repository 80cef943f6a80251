"""Checks that refuse a run before it spends server time: datasets, servers, workload fits.

`preflight` runs before any server starts or any cell is measured (`run`, `bench`, a
pilot, a Slurm job; the Slurm submitter calls `preflight_slurm`), and is the whole of
`run --dry-run`: every dataset of a cell to measure loads; every server to start resolves
to its command (the vllm executable exists, enough GPUs are visible, `vllm --version` is
the suite's `vllm_version` when it pins one); every attached server answers as vLLM
(`/v1/models`, `/metrics`) and is what its suite entry says (served model, whether it
speculates, K from the positions of `vllm:spec_decode_num_accepted_tokens_per_pos_total`,
GET /version when the suite pins `vllm_version`). Every failure is bad input
(`SpecbenchError`, one line naming the server, field or file, exit 2). With
`accept_server_values` an attached server's own values replace the suite's in the plan, so
the manifest records what was measured.
"""

from __future__ import annotations

import itertools
import os
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import aiohttp

from specbench.client.control import discover_model, scrape, server_version
from specbench.common.errors import ServerError, SpecbenchError
from specbench.common.telemetry import AUTO, OFF
from specbench.data.context import check_context_fit
from specbench.data.loader import Workload, load_workload
from specbench.energy.reading import TelemetryUnavailable
from specbench.energy.select import counted_gpus
from specbench.energy.sources import open_source
from specbench.launch import ServerConfig
from specbench.launch.argv import build_env, launch_config
from specbench.launch.capabilities import version_matches
from specbench.launch.command import LaunchCommand, launch_command
from specbench.launch.live import LiveServer
from specbench.measure.checks import concurrency_warning
from specbench.measure.loop import run_event_loop
from specbench.run.cells import complete_cells
from specbench.run.plan import Plan, PlanServer, RunOptions
from specbench.suite.model import Cell, Suite, WorkloadSpec, output_fit_error, workload_keys

#: The per-position acceptance series: one `position` label per draft token, so K positions.
_K_SOURCE = "positions of vllm:spec_decode_num_accepted_tokens_per_pos_total"


@dataclass(frozen=True)
class ServerAnswer:
    """What an attached server said about itself before any cell."""

    model: str
    max_model_len: int | None
    speculative: bool
    #: Draft tokens per step, from the per-position series; None when it has none.
    num_speculative_tokens: int | None
    vllm_version: str | None


@dataclass(frozen=True)
class Launch:
    """A server to start for a run of cells (on one launch): its resolved command."""

    server: str
    command: LaunchCommand
    cells: tuple[Cell, ...]
    launch: int = 0


@dataclass(frozen=True)
class Checked:
    """A plan that passed preflight, and what the checks found."""

    plan: Plan
    #: Cells with a summary.json already (measured again only with --force).
    complete: frozenset[Cell]
    workloads: dict[int, Workload]
    launches: tuple[Launch, ...]
    attached: dict[str, ServerAnswer]
    #: Attached server → field → (suite's value, server's value), taken from the server.
    accepted: dict[str, dict[str, tuple[Any, Any]]]


def preflight(plan: Plan, options: RunOptions, *, accept_server_values: bool = False) -> Checked:
    """Check everything the plan's cells to measure need; raise one line on the first fault."""
    options.api_key()  # an unset variable is bad input before anything starts
    check_relaunchable(plan)
    complete = complete_cells(options.output, plan.cells)
    cells = [c for c in plan.cells if options.force or c not in complete]
    workloads = load_workloads(plan, cells)
    launches = tuple(server_launches(plan, cells, options))
    check_telemetry(plan, cells)
    # Every endpoint given is asked, also one whose cells are complete: the rerun of a run
    # that accepted a server's values resumes only when the plan holds them again.
    attached_names = [
        n for n in dict.fromkeys(c.server for c in plan.cells) if plan.servers[n].attached
    ]
    answers = (
        run_event_loop(_ask_servers(plan, attached_names, options.api_key()))
        if attached_names
        else {}
    )
    accepted: dict[str, dict[str, tuple[Any, Any]]] = {}
    for name, answer in answers.items():
        server = plan.servers[name]
        if server.config is None:
            continue
        differences = identity_differences(server.config, answer)
        if differences and not accept_server_values:
            raise SpecbenchError(_mismatch_line(server, differences))
        if differences:
            accepted[name] = differences
            plan = _with_server_values(plan, name, answer)
    return Checked(plan, complete, workloads, launches, answers, accepted)


def check_telemetry(plan: Plan, cells: Sequence[Cell]) -> None:
    """A GPU energy source a server names (`gpu_telemetry` other than auto/off) must read
    every GPU the server counts, before any server starts: one line naming the server and
    field otherwise. An exporter the emulator serves itself (`exporter_port`) starts with
    it, so it is read at the first cell instead (a failure there is the cell's reason)."""
    for name in dict.fromkeys(cell.server for cell in cells):
        server = plan.servers[name]
        config = server.config
        if config is None or config.gpu_telemetry in (AUTO, OFF):
            continue
        if not server.attached and _serves_its_own_exporter(config):
            continue
        gpus = counted_gpus(config.gpus, launch_env(config), config.gpu_ids)
        field = f"server {name!r}: gpu_telemetry = {config.gpu_telemetry!r}"
        try:
            source = open_source(config.gpu_telemetry, list(gpus.ids))
            try:
                reading = source.read()
            finally:
                source.close()
        except TelemetryUnavailable as error:
            raise SpecbenchError(
                f"{field} does not answer ({error.reason}: {error}); allowed: a source that "
                'reads the server\'s GPUs, or "auto" / "off"'
            ) from error
        missing = [gpu for gpu in gpus.ids if gpu not in reading.gpus]
        if missing:
            raise SpecbenchError(
                f"{field} does not list GPU {', '.join(missing)} of the GPUs counted "
                f"({gpus.how}); allowed: GPUs the source lists (gpu_ids, or the launch's "
                "*_VISIBLE_DEVICES)"
            )


def launch_env(config: ServerConfig) -> dict[str, str]:
    """The environment a launch of `config` gets (its variables over specbench's own)."""
    return build_env(config, os.environ)


def _serves_its_own_exporter(config: ServerConfig) -> bool:
    """An emulator whose `exporter_port` is the port `gpu_telemetry` names on this host."""
    port = config.emulator.exporter_port if config.emulator is not None else None
    if config.engine != "emulator" or not port:
        return False
    url = urllib.parse.urlsplit(config.gpu_telemetry)
    return url.port == port and url.hostname in ("127.0.0.1", "localhost", "::1")


def preflight_slurm(suite: Suite, cells: Sequence[Cell]) -> None:
    """The Slurm submitter's preflight of the cells it will submit: every dataset loads.

    Servers start on the compute nodes (their executable there, after the job's setup), so
    each job checks those in its own `preflight` before its first server starts.
    """
    keys = workload_keys(suite.workloads)
    for index in sorted({cell.workload_index for cell in cells}):
        load_plan_workload(suite.workloads[index], keys[index])


def check_relaunchable(plan: Plan) -> None:
    """Launches are fresh starts: a server the run attaches to (`--endpoint`) cannot give
    them. One line naming `launches` when a cell of an attached server is on launch ≥ 1."""
    for cell in plan.cells:
        server = plan.servers[cell.server]
        if cell.launch > 0 and server.attached:
            raise SpecbenchError(
                f"launches = {plan.launches}: server {server.name!r} is attached "
                f"(--endpoint {server.name}={server.endpoint}) and cannot be started afresh "
                "for each launch; allowed with an attached server: launches = 1 (or let "
                "specbench start it: drop its --endpoint)"
            )


def server_launches(plan: Plan, cells: Sequence[Cell], options: RunOptions) -> list[Launch]:
    """Each server start the cells need (a server config on one launch), in run order,
    resolved to the command the launch uses."""
    launches = []
    for (name, launch, config), group in itertools.groupby(cells, key=plan.start_key):
        if plan.servers[name].attached or config is None:
            continue
        command = launch_command(
            launch_config(config),
            name=name,
            vllm_bin=options.vllm_bin,
            base_env=os.environ,
            gpus_unchecked=options.gpus_unchecked,
        )
        launches.append(Launch(name, command, tuple(group), launch))
    return launches


async def _ask_servers(
    plan: Plan, names: Sequence[str], api_key: str | None
) -> dict[str, ServerAnswer]:
    async with aiohttp.ClientSession() as session:
        return {name: await ask_server(session, plan.servers[name], api_key) for name in names}


async def ask_server(
    session: aiohttp.ClientSession, server: PlanServer, api_key: str | None
) -> ServerAnswer:
    """An attached server's answers to /v1/models, /metrics and /version; one line if it fails."""
    url = (server.endpoint or "").rstrip("/")
    try:
        # /metrics first, as before every cell: without it there is no acceptance.
        metrics = (await scrape(session, url, api_key)).snapshot
        served = await discover_model(session, url, api_key)
    except SpecbenchError as error:  # unreachable, not vLLM: bad input, not a failed cell
        raise SpecbenchError(f"server {server.name!r} at {url}: {error}") from None
    max_model_len = served.get("max_model_len")
    positions = len(metrics.per_position)
    return ServerAnswer(
        model=str(served["id"]),
        max_model_len=max_model_len if isinstance(max_model_len, int) else None,
        speculative=metrics.has_spec_decode,
        num_speculative_tokens=positions or None,
        vllm_version=await server_version(session, url, api_key),
    )


def identity_differences(config: ServerConfig, answer: ServerAnswer) -> dict[str, tuple[Any, Any]]:
    """Field → (suite's value, server's value) where the server is not its suite entry."""
    differences: dict[str, tuple[Any, Any]] = {}
    if answer.model != config.api_model_name:
        differences["served model"] = (config.api_model_name, answer.model)
    if answer.speculative != config.is_speculative:
        differences["speculative"] = (config.is_speculative, answer.speculative)
    elif config.speculative is not None and answer.num_speculative_tokens is not None:
        suite_k = config.speculative.num_speculative_tokens
        if suite_k != answer.num_speculative_tokens:
            differences["num_speculative_tokens"] = (suite_k, answer.num_speculative_tokens)
    if config.vllm_version is not None and not version_matches(
        config.vllm_version, answer.vllm_version
    ):
        differences["vllm_version"] = (config.vllm_version, answer.vllm_version)
    return differences


def _mismatch_line(server: PlanServer, differences: dict[str, tuple[Any, Any]]) -> str:
    said = "; ".join(
        f"{field}: the suite says {ours!r}, the server {theirs!r}"
        + (f" ({_K_SOURCE})" if field == "num_speculative_tokens" else "")
        + (" (GET /version)" if field == "vllm_version" else "")
        for field, (ours, theirs) in differences.items()
    )
    return (
        f"--endpoint {server.name}={server.endpoint} does not match the suite's server "
        f"{server.name!r}: {said}; attach the right server, fix the suite, or pass "
        "--accept-server-values to measure it and record the server's values"
    )


def _with_server_values(plan: Plan, name: str, answer: ServerAnswer) -> Plan:
    """The plan with server `name`'s suite entry replaced by what the server answered."""
    server = plan.servers[name]
    assert server.config is not None
    config = server.config
    update: dict[str, Any] = {"served_model_name": answer.model}
    if not answer.speculative:
        update["speculative"] = None
    elif config.speculative is not None and answer.num_speculative_tokens is not None:
        update["speculative"] = config.speculative.model_copy(
            update={"num_speculative_tokens": answer.num_speculative_tokens}
        )
    if config.vllm_version is not None:
        update["vllm_version"] = answer.vllm_version
    config = config.model_copy(update=update)
    servers = {**plan.servers, name: replace(server, config=config, model=answer.model)}
    # The suite too, so the manifest records (and a rerun resumes) what was measured.
    suite = plan.suite
    if suite is not None:
        suite = suite.model_copy(update={"servers": {**suite.servers, name: config}})
    return replace(plan, servers=servers, suite=suite)


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
        accept_partial=spec.accept_partial,
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
