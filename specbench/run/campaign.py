"""`specbench run SUITE`: every cell of a suite, each server started once, resumable.

For each server config (in suite order), the cells that still lack a `summary.json` are
measured against one launch of that server: warmup, scrape, load, scrape, store. A failed
cell writes `failure.json` and the campaign goes on; a server that died is restarted (up to
`max_restarts` times) and its remaining cells continue. A rerun measures only what is
missing, so a crash or Ctrl-C costs at most the cell in flight.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from specbench import store
from specbench.client.sender import RequestSettings
from specbench.common.errors import ServerError, SpecbenchError
from specbench.data.loader import Workload, load_workload
from specbench.launch import ServerConfig, ServerProcess
from specbench.launch.health import is_ready, log_tail
from specbench.measure.cell import CellOutcome, CellProgress, CellSpec, run_cell, utc_now
from specbench.measure.loop import run_event_loop
from specbench.run.bench import context_warnings, make_sender
from specbench.store.manifest import load_manifest, update_manifest
from specbench.suite import Cell, Suite

#: Extra warmup conversations for the first cell of a freshly started server, so one-off
#: compilation and autotuning stay out of the measured window.
FIRST_CELL_EXTRA_WARMUP = 8
LOG_TAIL_LINES = 40
#: Seconds a server that stopped answering gets before it counts as dead and is restarted.
ALIVE_GRACE_S = 5.0


@dataclass(frozen=True)
class CampaignOptions:
    """How to run a suite: where results go and what to do about servers and failures."""

    output: Path
    endpoints: Mapping[str, str] = field(default_factory=dict)
    force: bool = False
    fail_fast: bool = False
    max_restarts: int = 2
    vllm_bin: str | None = None
    servers: tuple[str, ...] = ()
    workloads: tuple[int, ...] = ()
    ready_timeout_s: float = 1800.0
    api_key: str | None = None
    request_timeout_s: float = 600.0
    #: Server logs go here; None is `output/logs`. Slurm jobs sharing a server name use
    #: their own, so two nodes never append to one log file.
    log_dir: Path | None = None


class CampaignProgress:
    """Campaign events; the CLI subclasses it to draw the campaign bar."""

    def begin(self, total: int, complete: int) -> None:
        """Called once with the matrix size and the cells already complete."""

    def server(self, name: str, message: str) -> None:
        """A server is starting, ready, restarting or giving up."""

    def warn(self, message: str) -> None:
        """Something the user should know before trusting the cells (e.g. context length)."""

    def cell(self, cell: Cell) -> CellProgress:
        """Called before a cell is measured; returns the cell's progress sink."""
        return CellProgress()

    def cell_done(self, cell: Cell, outcome: CellOutcome) -> None:
        """Called after a cell was measured, skipped or failed."""


@dataclass
class CampaignResult:
    """What happened to each cell, in matrix order."""

    outcomes: dict[Cell, CellOutcome] = field(default_factory=dict)

    @property
    def failed(self) -> list[Cell]:
        return [cell for cell, outcome in self.outcomes.items() if outcome.error]

    @property
    def measured(self) -> list[Cell]:
        return [c for c, o in self.outcomes.items() if o.summary and not o.skipped]


def suite_hash(suite: Suite) -> str:
    """sha256 of the resolved suite (sorted keys): two runs of the same campaign match.

    `[slurm]` says where cells run, not what they measure: it stays out of the hash, so a
    local run and a Slurm run share one results directory.
    """
    resolved = suite.model_dump(mode="json", exclude={"source", "slurm"})
    return hashlib.sha256(orjson.dumps(resolved, option=orjson.OPT_SORT_KEYS)).hexdigest()


def cell_directory(suite: Suite, cell: Cell, output: Path) -> Path:
    workload = suite.workloads[cell.workload_index]
    name = store.dataset_dir_name(
        workload.dataset, workload.categories or (), workload.entropy_tiers or ()
    )
    return store.cell_dir(output, cell.server, name, cell.concurrency, cell.repeat)


def select_cells(suite: Suite, options: CampaignOptions) -> list[Cell]:
    cells = suite.expand()
    unknown = [name for name in options.servers if name not in suite.servers]
    if unknown:
        raise SpecbenchError(
            f"--server {unknown[0]!r}: not in the suite (have {', '.join(suite.servers)})"
        )
    if options.servers:
        cells = [c for c in cells if c.server in options.servers]
    if options.workloads:
        cells = [c for c in cells if c.workload_index in options.workloads]
    if not cells:
        raise SpecbenchError("the selection matches no cell of the suite")
    return cells


def run_campaign(
    suite: Suite, options: CampaignOptions, progress: CampaignProgress | None = None
) -> CampaignResult:
    progress = progress or CampaignProgress()
    cells = select_cells(suite, options)
    for name in options.endpoints:
        if name not in suite.servers:
            raise SpecbenchError(f"--endpoint {name}=...: no server {name!r} in the suite")
    digest = suite_hash(suite)
    existing = load_manifest(options.output).get("suite_hash")
    if existing and existing != digest:
        raise SpecbenchError(
            f"{options.output}: holds results of a different suite (hash {existing[:12]}, this one "
            f"{digest[:12]}); use a new --output"
        )
    update_manifest(
        options.output,
        created_at=utc_now(),
        suite=suite.model_dump(mode="json"),
        suite_hash=digest,
        servers={
            name: {
                "baseline": config.baseline,
                "engine": config.engine,
                "speculative": config.is_speculative,
                "gpus": suite.gpus_for(name),
                "prefix_cache": _prefix_cache_mode(config),
            }
            for name, config in suite.servers.items()
        },
        campaign={"started_at": utc_now(), "finished_at": None},
    )
    result = CampaignResult()
    done = [c for c in cells if store.is_complete(cell_directory(suite, c, options.output))]
    progress.begin(len(cells), 0 if options.force else len(done))
    workloads: dict[int, Workload] = {}
    try:
        for (server, config), group in itertools.groupby(
            cells, key=lambda c: (c.server, suite.server_config_for(c))
        ):
            _run_server(suite, server, config, list(group), options, progress, result, workloads)
            if options.fail_fast and result.failed:
                break
    finally:
        update_manifest(
            options.output,
            campaign={
                "finished_at": utc_now(),
                "cells_completed": sorted(c.key for c, o in result.outcomes.items() if o.summary),
                "cells_failed": sorted(c.key for c in result.failed),
            },
        )
    return result


def _prefix_cache_mode(config: ServerConfig) -> str:
    if "--no-enable-prefix-caching" in config.extra_args:
        return "disabled"
    return "reset_before_each_cell" if config.engine == "vllm" else "none (emulator)"


def _launch_config(config: ServerConfig) -> ServerConfig:
    """The server as launched: vLLM gets VLLM_SERVER_DEV_MODE=1 so /reset_prefix_cache works."""
    if config.engine != "vllm" or "--no-enable-prefix-caching" in config.extra_args:
        return config
    return config.model_copy(update={"env": {**config.env, "VLLM_SERVER_DEV_MODE": "1"}})


@dataclass
class _Server:
    """A started (or attached) server: its URL, liveness check and log."""

    base_url: str
    model: str
    process: ServerProcess | None

    def alive(self, grace_s: float = ALIVE_GRACE_S) -> bool:
        """The process runs and the server answers; a dying process gets `grace_s` to exit.

        A killed process closes its sockets before the kernel reports it exited, so a client
        can see "connection refused" while the PID still looks alive: ask the server itself.
        """
        deadline = time.monotonic() + grace_s
        while True:
            if self.process is not None:
                try:
                    self.process.check_alive()
                except ServerError:
                    return False
            if is_ready(self.base_url, self.model):
                return True
            if time.monotonic() > deadline:
                return False  # running but not serving: treat as dead, so it is restarted
            time.sleep(0.1)

    def log_tail(self) -> list[str]:
        if self.process is None:
            return []
        return log_tail(self.process.log_path, 0, LOG_TAIL_LINES)


@contextmanager
def _started(
    name: str, config: ServerConfig, options: CampaignOptions, progress: CampaignProgress
) -> Iterator[_Server]:
    attached = options.endpoints.get(name)
    if attached:
        if not is_ready(attached.rstrip("/"), config.api_model_name):
            raise ServerError(
                f"--endpoint {name}={attached}: not ready, or {config.api_model_name!r} not served"
            )
        yield _Server(base_url=attached.rstrip("/"), model=config.api_model_name, process=None)
        return
    progress.server(name, "starting")
    with ServerProcess(
        _launch_config(config),
        name=name,
        log_dir=options.log_dir or options.output / "logs",
        vllm_bin=options.vllm_bin,
        ready_timeout_s=options.ready_timeout_s,
    ) as process:
        assert process.provenance is not None
        update_manifest(
            options.output,
            servers={name: {"provenance": process.provenance.model_dump(mode="json")}},
        )
        progress.server(
            name, f"ready at {process.base_url} in {process.provenance.startup_s:.0f} s"
        )
        yield _Server(base_url=process.base_url, model=config.api_model_name, process=process)


def _run_server(
    suite: Suite,
    name: str,
    config: ServerConfig,
    cells: Sequence[Cell],
    options: CampaignOptions,
    progress: CampaignProgress,
    result: CampaignResult,
    workloads: dict[int, Workload],
) -> None:
    pending = []
    for cell in cells:
        directory = cell_directory(suite, cell, options.output)
        if store.is_complete(directory) and not options.force:
            outcome = CellOutcome(summary=store.read_summary(directory), skipped=True)
            result.outcomes[cell] = outcome
            progress.cell_done(cell, outcome)
        else:
            pending.append(cell)
    restarts = 0
    while pending:
        try:
            with _started(name, config, options, progress) as server:
                pending = run_event_loop(
                    _measure(
                        suite, name, config, pending, server, options, progress, result, workloads
                    )
                )
        except ServerError as error:  # the server did not start: its cells cannot run
            for cell in pending:
                _fail(cell, str(error), suite, options, progress, result)
            return
        if pending:
            restarts += 1
            if restarts > options.max_restarts:
                message = f"server {name!r} died {restarts} times; gave up on its remaining cells"
                progress.server(name, message)
                for cell in pending:
                    _fail(cell, message, suite, options, progress, result)
                return
            progress.server(name, f"died; restart {restarts}/{options.max_restarts}")


def _fail(
    cell: Cell,
    message: str,
    suite: Suite,
    options: CampaignOptions,
    progress: CampaignProgress,
    result: CampaignResult,
) -> None:
    directory = cell_directory(suite, cell, options.output)
    store.write_json(
        directory / store.FAILURE,
        {"error_type": "ServerError", "message": message, "at": utc_now()},
    )
    outcome = CellOutcome(summary=None, error=message)
    result.outcomes[cell] = outcome
    progress.cell_done(cell, outcome)


async def _measure(
    suite: Suite,
    name: str,
    config: ServerConfig,
    cells: Sequence[Cell],
    server: _Server,
    options: CampaignOptions,
    progress: CampaignProgress,
    result: CampaignResult,
    workloads: dict[int, Workload],
) -> list[Cell]:
    """Measure `cells` in order; return those left when the server died (failed one excluded)."""
    limit = max(c.concurrency for c in cells) + 8
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=limit, limit_per_host=0)
    ) as session:
        senders: dict[int, Any] = {}
        first = True
        health: dict[str, bool] = {}  # the liveness verdict of the last failed cell

        def failure_details() -> dict[str, Any]:
            health["alive"] = server.alive()
            return {"server_alive": health["alive"], "log_tail": server.log_tail()}

        for index, cell in enumerate(cells):
            spec_w = suite.workloads[cell.workload_index]
            if cell.workload_index not in workloads:
                workloads[cell.workload_index] = load_workload(
                    spec_w.dataset,
                    categories=spec_w.categories or (),
                    entropy_tiers=spec_w.entropy_tiers or (),
                    num_prompts=spec_w.num_prompts,
                )
            workload = workloads[cell.workload_index]
            if cell.workload_index not in senders:
                for message in context_warnings(
                    workload, config.max_model_len, spec_w.max_tokens, tokenizer=None
                ):
                    progress.warn(f"{name} × {spec_w.dataset}: {message}")
                settings = RequestSettings(
                    model=config.api_model_name,
                    max_tokens=spec_w.max_tokens,
                    temperature=spec_w.temperature,
                )
                senders[cell.workload_index] = make_sender(
                    "aiohttp",
                    session,
                    server.base_url,
                    settings,
                    api_key=options.api_key,
                    request_timeout_s=options.request_timeout_s,
                    max_connections=limit,
                )
            spec = CellSpec(
                label=name,
                dataset=spec_w.dataset,
                category=_single(spec_w.categories),
                concurrency=cell.concurrency,
                repeat=cell.repeat,
                gpus=suite.gpus_for(name),
                model=config.api_model_name,
                endpoint=server.base_url,
                api="chat",
                client="aiohttp",
                max_tokens=spec_w.max_tokens,
                temperature=spec_w.temperature,
                warmup=spec_w.warmup + (FIRST_CELL_EXTRA_WARMUP if first else 0),
                save_outputs=spec_w.temperature == 0,
            )
            first = False
            health.clear()
            outcome = await run_cell(
                spec,
                workload.conversations,
                session,
                senders[cell.workload_index],
                cell_directory(suite, cell, options.output),
                force=options.force,
                api_key=options.api_key,
                progress=progress.cell(cell),
                failure_details=failure_details,
            )
            result.outcomes[cell] = outcome
            progress.cell_done(cell, outcome)
            if outcome.error and not health.get("alive", True):
                return list(cells[index + 1 :])
            if outcome.error and options.fail_fast:
                return []
    return []


def _single(categories: Sequence[str] | None) -> str | None:
    return categories[0] if categories and len(categories) == 1 else None
