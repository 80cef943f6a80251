"""The one orchestrator: measure every cell of a plan, each server started or attached once.

For each server (in plan order), the cells that still lack a `summary.json` are measured
against one launch of that server (or the running server it attaches to): check
`/metrics` and the model, then per cell warmup, scrape, load, scrape, store. A failed cell
writes `failure.json` and the run goes on; a started server that died is restarted (up to
`max_restarts` times) and its remaining cells continue. A rerun measures only what is
missing, so a crash or Ctrl-C costs at most the cell in flight. SIGINT and SIGTERM
(`specbench.common.interrupt`) stop the run between cells, or discard the cell in flight.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from specbench import store
from specbench.client.control import discover_model, scrape, server_version
from specbench.client.sender import AiohttpSender, RequestSettings, Sender
from specbench.common import interrupt
from specbench.common.errors import ServerError, SpecbenchError
from specbench.data.context import check_context_fit
from specbench.data.conversation import Conversation
from specbench.data.loader import Workload, load_workload
from specbench.launch import ServerConfig, ServerProcess
from specbench.launch.health import is_ready, log_tail
from specbench.launch.host import left_running, process_identity, stop_group
from specbench.measure.cell import CellOutcome, CellProgress, run_cell
from specbench.measure.checks import cell_warnings, concurrency_warning
from specbench.measure.loop import run_event_loop
from specbench.measure.precision import default_floor, stratified_order
from specbench.measure.summarize import CellSpec
from specbench.run.plan import Plan, PlanServer, RunOptions
from specbench.run.resume import bind, check_resume
from specbench.store.failure import FailureRecord, write_failure
from specbench.store.lock import results_lock
from specbench.store.manifest import (
    Manifest,
    RunRecord,
    RunStatus,
    ServerCost,
    new_run,
    read_manifest,
    run_cost,
    update_manifest,
    utc_now,
)
from specbench.store.summary import CellSummary
from specbench.suite.model import Cell, WorkloadSpec

#: Extra warmup conversations for the first cell of a freshly started server, so one-off
#: compilation and autotuning stay out of the measured window.
FIRST_CELL_EXTRA_WARMUP = 8
LOG_TAIL_LINES = 40
#: Seconds a server that stopped answering gets before it counts as dead and is restarted.
ALIVE_GRACE_S = 5.0


class RunProgress:
    """Run events; the CLI subclasses it to draw progress, a Slurm job to log them."""

    def begin(self, total: int, complete: int) -> None:
        """Called once with the number of cells and those already complete."""

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
class RunResult:
    """What happened to each cell, in plan order."""

    outcomes: dict[Cell, CellOutcome] = field(default_factory=dict)

    @property
    def failed(self) -> list[Cell]:
        return [cell for cell, outcome in self.outcomes.items() if outcome.error]

    @property
    def measured(self) -> list[Cell]:
        return [c for c, o in self.outcomes.items() if o.summary and not o.skipped]


def cell_directory(output: Path, cell: Cell) -> Path:
    return store.cell_path(
        output, store.CellKey(cell.server, cell.workload, cell.concurrency, cell.repeat)
    )


def run_plan(plan: Plan, options: RunOptions, progress: RunProgress | None = None) -> RunResult:
    """Measure every missing cell of `plan` (all of them with `force`); blocking.

    The results directory is locked for the whole run (`store.lock`): a second writer is
    refused with the holder's pid, host and start time. Shards of one Slurm campaign share it.
    """
    record = new_run(plan.command)
    shared = plan.command == "slurm-job"
    with results_lock(options.output, record.started_at or utc_now(), shared=shared):
        return _run_locked(plan, options, progress or RunProgress(), record)


def _run_locked(
    plan: Plan, options: RunOptions, progress: RunProgress, record: RunRecord
) -> RunResult:
    runner = _Runner(plan, options, progress, options.api_key(), record)
    existing = read_manifest(options.output)
    check_resume(existing, plan, options.output, force=options.force)
    if existing is not None:
        # Written as it is (nothing bound yet): a manifest that cannot be written is found
        # before any server starts.
        update_manifest(options.output, lambda manifest: manifest)
        if plan.command != "slurm-job":  # holding the lock alone: no live run owns a server
            _stop_left_servers(existing, options.output, progress)
    status: RunStatus = "interrupted"
    try:
        done = {c for c in plan.cells if store.is_complete(cell_directory(options.output, c))}
        for cell in plan.cells:  # a bad dataset is bad input before any server starts
            if options.force or cell not in done:
                runner.workload(cell)
        progress.begin(len(plan.cells), 0 if options.force else len(done))
        for (name, config), group in itertools.groupby(
            plan.cells, key=lambda c: (c.server, plan.launch_config(c))
        ):
            interrupt.check()  # a stop signal between servers: stop before the next starts
            runner.run_server(plan.servers[name], config, list(group))
            if options.fail_fast and runner.result.failed:
                break
        status = "cells failed" if runner.result.failed else "completed"
    except SpecbenchError:
        status = "error"
        raise
    finally:
        finished = record.model_copy(
            update={
                "finished_at": utc_now(),
                "status": status,
                "cells_measured": sorted(c.key for c in runner.result.measured),
                "cells_failed": sorted(c.key for c in runner.result.failed),
                "cost": run_cost(list(runner.costs.values())),
            }
        )
        if runner.bound or runner.result.outcomes:  # a run refused before any cell: no trace
            update_manifest(options.output, lambda m: m.with_run(finished))
    return runner.result


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


def _stop_left_servers(manifest: Manifest, output: Path, progress: RunProgress) -> None:
    """Stop the servers a dead campaign left running (its pid and start time recorded)."""
    recorded = {n: s.process for n, s in manifest.servers.items() if s.process is not None}
    for name, identity in recorded.items():
        if left_running(identity):
            pid = identity["pid"]
            stopped = stop_group(pid)
            progress.warn(
                f"server {name!r}: pid {pid}, started by an earlier run that died, was still "
                + ("running; stopped it" if stopped else "running and could not be stopped")
            )

    def forget(manifest: Manifest) -> Manifest:
        for name in recorded:
            manifest = manifest.with_server(name, process=None)
        return manifest

    if recorded:
        update_manifest(output, forget)


def _claim(manifest: Manifest, plan: Plan, options: RunOptions) -> Manifest:
    """Record the plan's suite, workloads and servers (at its first cell; run.resume)."""
    check_resume(manifest, plan, options.output, force=options.force)  # a concurrent change
    manifest = bind(manifest, plan, force=options.force)
    for server in plan.servers.values():
        config = server.config
        manifest = manifest.with_server(
            server.name,
            baseline=server.baseline,
            speculative=config.is_speculative if config else None,
            engine=None if server.attached or config is None else config.engine,
            endpoint=server.endpoint,
            gpus=server.gpus,
            prefix_cache=_prefix_cache_mode(config),
        )
    return manifest


def _prefix_caching_off(config: ServerConfig | None) -> bool:
    return config is not None and "--no-enable-prefix-caching" in config.extra_args


def _prefix_cache_mode(config: ServerConfig | None) -> str:
    """The manifest's claim before any cell: what will be tried, never what happened."""
    if _prefix_caching_off(config):
        return "disabled (--no-enable-prefix-caching)"
    return "reset requested before each cell; not yet verified"


def _prefix_cache_record(tally: dict[str, int], last_failure: str | None) -> str:
    """The manifest's account of this run's resets, from the servers' own answers."""
    verified, refused = tally.get("verified", 0), tally.get("refused", 0)
    if refused:
        return (
            f"reset before each cell REFUSED in {refused} of {verified + refused} cells of the "
            f"last run ({last_failure}); see summary.json prefix_cache_reset per cell"
        )
    return f"reset before each cell, verified by the server in {verified} cells of the last run"


def _launch_config(config: ServerConfig) -> ServerConfig:
    """The server as launched, with VLLM_SERVER_DEV_MODE=1 so /reset_prefix_cache works.

    The emulator reads the same variable, so it behaves as the vLLM it stands for.
    """
    if _prefix_caching_off(config):
        return config
    return config.model_copy(update={"env": {**config.env, "VLLM_SERVER_DEV_MODE": "1"}})


@dataclass
class _Live:
    """A started (or attached) server: its URL, liveness check and log."""

    base_url: str
    model: str | None
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
            if self.model is not None and is_ready(self.base_url, self.model):
                return True
            if time.monotonic() > deadline:
                return False  # running but not serving: treat as dead, so it is restarted
            time.sleep(0.1)

    def log_tail(self) -> list[str]:
        if self.process is None:
            return []
        return log_tail(self.process.log_path, 0, LOG_TAIL_LINES)


class _Runner:
    """Runs the cells of one plan; holds what lives as long as the run (workloads, result)."""

    def __init__(
        self,
        plan: Plan,
        options: RunOptions,
        progress: RunProgress,
        api_key: str | None,
        record: RunRecord,
    ) -> None:
        self.plan = plan
        self.record = record
        #: Whether the results directory holds this plan's suite yet: not before a cell starts,
        #: so a run refused before then leaves nothing that blocks the corrected one.
        self.bound = False
        self.options = options
        self.progress = progress
        self.api_key = api_key
        self.result = RunResult()
        self.loaded: dict[int, Workload] = {}
        self.last_reset_failure: dict[str, str] = {}
        self.costs: dict[str, ServerCost] = {}

    def _account(self, server: PlanServer, **seconds: float) -> None:
        """Add seconds (server_s, starting_s, measuring_s) to the server's cost."""
        old = self.costs.get(server.name) or ServerCost(
            server=server.name, gpus=server.gpus, server_s=0, starting_s=0, measuring_s=0, other_s=0
        )
        update = {k: getattr(old, k) + v for k, v in seconds.items()}
        new = old.model_copy(update=update)
        other = max(0.0, new.server_s - new.starting_s - new.measuring_s)
        self.costs[server.name] = new.model_copy(update={"other_s": other})

    def _account_cell(self, server: PlanServer, cell: Cell, wall_s: float, window_s: float) -> None:
        self._account(server, measuring_s=window_s)
        cost = self.costs[server.name]
        walls = {**cost.cell_wall_s, cell.key: round(wall_s, 3)}
        self.costs[server.name] = cost.model_copy(update={"cell_wall_s": walls})

    def run_server(
        self, server: PlanServer, config: ServerConfig | None, cells: Sequence[Cell]
    ) -> None:
        """Measure the server's missing cells, restarting it when it dies."""
        pending = []
        for cell in cells:
            directory = cell_directory(self.options.output, cell)
            if store.is_complete(directory) and not self.options.force:
                outcome = CellOutcome(summary=store.read_summary(directory), skipped=True)
                self.result.outcomes[cell] = outcome
                self.progress.cell_done(cell, outcome)
            else:
                pending.append(cell)
        restarts = 0
        while pending:
            spawned = time.perf_counter()
            try:
                with self._started(server, config) as live:
                    pending = run_event_loop(self._measure(server, live, pending))
            except ServerError as error:
                self._account(
                    server, server_s=time.perf_counter() - spawned
                )  # the server did not start: its cells cannot run
                for cell in pending:
                    self._fail(cell, str(error))
                return
            self._account(server, server_s=time.perf_counter() - spawned)
            if pending:
                restarts += 1
                if restarts > self.options.max_restarts:
                    message = (
                        f"server {server.name!r} died {restarts} times; "
                        "gave up on its remaining cells"
                    )
                    self.progress.server(server.name, message)
                    for cell in pending:
                        self._fail(cell, message)
                    return
                self.progress.server(
                    server.name, f"died; restart {restarts}/{self.options.max_restarts}"
                )

    @contextmanager
    def _started(self, server: PlanServer, config: ServerConfig | None) -> Iterator[_Live]:
        if server.endpoint is not None:  # checked by `_measure` before its first request
            yield _Live(base_url=server.endpoint.rstrip("/"), model=server.model, process=None)
            return
        assert config is not None, "a server without an endpoint has a config to start"
        output = self.options.output
        self.progress.server(server.name, "starting")

        def spawned(pid: int) -> None:  # recorded before the (long) wait for readiness
            identity = process_identity(pid)
            update_manifest(output, lambda m: m.with_server(server.name, process=identity))

        try:
            with ServerProcess(
                _launch_config(config),
                name=server.name,
                log_dir=self.options.log_dir or output / "logs",
                vllm_bin=self.options.vllm_bin,
                ready_timeout_s=self.options.ready_timeout_s,
                on_spawn=spawned,
            ) as process:
                provenance = process.provenance
                assert provenance is not None
                self._account(server, starting_s=provenance.startup_s)
                update_manifest(
                    output,
                    lambda m: m.with_server(
                        server.name, provenance=provenance.model_dump(mode="json")
                    ),
                )
                for note in process.notes:
                    self.progress.warn(f"server {server.name}: {note}")
                self.progress.server(
                    server.name, f"ready at {process.base_url} in {provenance.startup_s:.0f} s"
                )
                yield _Live(base_url=process.base_url, model=config.api_model_name, process=process)
        finally:
            update_manifest(output, lambda m: m.with_server(server.name, process=None))

    def _check(
        self, server: PlanServer, cell: Cell, summary: CellSummary, tally: dict[str, int]
    ) -> None:
        """Say out loud what may make the cell's figures mislead; keep the manifest honest."""
        for message in cell_warnings(summary):
            self.progress.warn(f"{cell.key}: {message}")
        if summary.prefix_cache_reset is None:
            return
        kind = "verified" if summary.prefix_cache_reset else "refused"
        tally[kind] = tally.get(kind, 0) + 1
        if not summary.prefix_cache_reset:
            self.last_reset_failure[server.name] = summary.prefix_cache_reset_detail or "?"
        text = _prefix_cache_record(tally, self.last_reset_failure.get(server.name))
        update_manifest(
            self.options.output, lambda m: m.with_server(server.name, prefix_cache=text)
        )

    def _fail(self, cell: Cell, message: str) -> None:
        write_failure(
            cell_directory(self.options.output, cell),
            FailureRecord(error_type="ServerError", message=message, at=utc_now()),
        )
        outcome = CellOutcome(summary=None, error=message)
        self.result.outcomes[cell] = outcome
        self.progress.cell_done(cell, outcome)

    def workload(self, cell: Cell) -> Workload:
        """The cell's conversations, loaded once per workload; recorded in the manifest."""
        index = cell.workload_index
        if index not in self.loaded:
            key = self.plan.keys[index]
            self.loaded[index] = load_plan_workload(self.plan.workloads[index], key)
            if self.bound:
                update_manifest(self.options.output, lambda m: self._loaded_into(m, index))
        return self.loaded[index]

    def _loaded_into(self, manifest: Manifest, index: int) -> Manifest:
        """The manifest with where workload `index`'s rows came from and how many."""
        key, loaded = self.plan.keys[index], self.loaded[index]
        new = manifest.workloads[key].model_copy(
            update={
                "dataset_source": loaded.source,
                "dataset_revision": loaded.revision,
                "num_conversations": len(loaded.conversations),
            }
        )
        return manifest.model_copy(update={"workloads": {**manifest.workloads, key: new}})

    def bind(self) -> None:
        """Before the first cell starts: record the suite, workloads, servers and this run."""
        if self.bound:
            return

        def change(manifest: Manifest) -> Manifest:
            manifest = _claim(manifest, self.plan, self.options).with_run(self.record)
            for index in self.loaded:
                manifest = self._loaded_into(manifest, index)
            return manifest

        update_manifest(self.options.output, change)
        self.bound = True

    async def _attach(
        self, session: aiohttp.ClientSession, server: PlanServer, live: _Live
    ) -> tuple[str, int | None]:
        """Check the server serves /metrics and the model; record it. (model, max_model_len)."""
        api_key = self.api_key
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
        live.model = model
        version = await server_version(session, live.base_url, api_key)
        update_manifest(
            self.options.output,
            lambda m: m.with_server(
                server.name, model=model, vllm_version=version, endpoint=live.base_url
            ),
        )
        max_model_len = served.get("max_model_len")
        if not isinstance(max_model_len, int) and server.config is not None:
            max_model_len = server.config.max_model_len
        return model, max_model_len if isinstance(max_model_len, int) else None

    def _check_workload(
        self,
        server: PlanServer,
        live: _Live,
        cell: Cell,
        cells: Sequence[Cell],
        max_model_len: int | None,
    ) -> None:
        """Before a workload's first cell on a server: refuse max_tokens ≥ max_model_len; warn."""
        spec_w = self.plan.workloads[cell.workload_index]
        workload = self.workload(cell)
        several = len(self.plan.servers) > 1 or len(self.plan.workloads) > 1
        where = f"{server.name} × {cell.workload}: " if several else ""
        if max_model_len is not None and spec_w.max_tokens >= max_model_len:
            raise SpecbenchError(
                f"{where}max_tokens = {spec_w.max_tokens} is not below "
                f"max_model_len = {max_model_len} of {live.base_url} "
                "(/v1/models): every request would be rejected; allowed: below "
                f"{max_model_len}"
            )
        for message in context_warnings(workload, max_model_len, spec_w):
            self.progress.warn(where + message)
        levels = [c.concurrency for c in cells if c.workload_index == cell.workload_index]
        over = concurrency_warning(levels, len(workload.conversations))
        if over:
            self.progress.warn(where + over)

    async def _measure(self, server: PlanServer, live: _Live, cells: Sequence[Cell]) -> list[Cell]:
        """Measure `cells` in order; return those left if the server died (failed one excluded)."""
        limit = max(c.concurrency for c in cells) + 8
        api_key = self.api_key
        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=limit, limit_per_host=0)
        ) as session:
            model, max_model_len = await self._attach(session, server, live)
            senders: dict[int, Sender] = {}
            first = live.process is not None
            health: dict[str, bool] = {}  # the liveness verdict of the last failed cell
            tally: dict[str, int] = {}  # prefix-cache resets verified / refused, this run

            def failure_details() -> dict[str, object]:
                health["alive"] = live.alive()
                return {"server_alive": health["alive"], "log_tail": live.log_tail()}

            try:
                for index, cell in enumerate(cells):
                    interrupt.check()  # a safe point: the previous cell is saved or failed
                    spec_w = self.plan.workloads[cell.workload_index]
                    workload = self.workload(cell)
                    if cell.workload_index not in senders:
                        self._check_workload(server, live, cell, cells, max_model_len)
                        senders[cell.workload_index] = make_sender(
                            spec_w, session, live.base_url, model, api_key, limit
                        )
                    conversations = cell_conversations(cell, spec_w, workload.conversations)
                    spec = cell_spec(
                        server,
                        cell,
                        spec_w,
                        model,
                        live.base_url,
                        first=first,
                        conversations=conversations,
                    )
                    first = False
                    health.clear()
                    self.bind()
                    cell_started = time.perf_counter()
                    outcome = await run_cell(
                        spec,
                        conversations,
                        session,
                        senders[cell.workload_index],
                        cell_directory(self.options.output, cell),
                        force=self.options.force,
                        api_key=api_key,
                        progress=self.progress.cell(cell),
                        failure_details=failure_details,
                    )
                    if not outcome.skipped:
                        window = outcome.summary.duration_s if outcome.summary else 0.0
                        self._account_cell(server, cell, time.perf_counter() - cell_started, window)
                    self.result.outcomes[cell] = outcome
                    self.progress.cell_done(cell, outcome)
                    if outcome.summary is not None and not outcome.skipped:
                        self._check(server, cell, outcome.summary, tally)
                    if outcome.error and not health.get("alive", True):
                        return list(cells[index + 1 :])
                    if outcome.error and self.options.fail_fast:
                        return []
            finally:
                for sender in senders.values():
                    close = getattr(sender, "close", None)
                    if close:
                        await close()
        return []


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
    """How one cell is measured and labelled in its summary."""
    floor = workload.min_conversations or default_floor(conversations)
    return CellSpec(
        label=server.name,
        workload=cell.workload,
        settings=workload,
        concurrency=cell.concurrency,
        repeat=cell.repeat,
        gpus=server.gpus,
        model=model,
        endpoint=base_url,
        warmup=workload.warmup + (FIRST_CELL_EXTRA_WARMUP if first else 0),
        reset_prefix_cache=not _prefix_caching_off(server.config),
        min_conversations=floor if workload.precision_at(cell.concurrency) is not None else 0,
        conversations_available=len(conversations),
    )


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
