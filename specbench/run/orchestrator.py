"""The one orchestrator: measure every cell of a plan, each server started once per launch.

For each server start (in plan order: `Plan.start_key`, a server config on one launch),
the cells that still lack a `summary.json` are measured against one fresh process of that
server (or the running server it attaches to): check
`/metrics` and the model, then per cell warmup, scrape, load, scrape, store. A failed cell
writes `failure.json` and the run goes on; a started server that died is restarted (up to
`max_restarts` times) and its remaining cells continue. A rerun measures only what is
missing, so a crash or Ctrl-C costs at most the cell in flight. SIGINT and SIGTERM
(`specbench.common.interrupt`) stop the run between cells, or discard the cell in flight.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import aiohttp

from specbench import store
from specbench.client.sender import Sender
from specbench.common import interrupt
from specbench.common.errors import ServerError, ServerStartFailed, SpecbenchError
from specbench.data.loader import Workload
from specbench.launch import ServerConfig, ServerProcess
from specbench.launch.argv import launch_config
from specbench.launch.container import stop_left_container
from specbench.launch.host import left_running, stop_group
from specbench.launch.live import LiveServer
from specbench.measure.cell import CellOutcome, CellProgress, run_cell
from specbench.measure.checks import cell_warnings
from specbench.measure.energy import EnergyMeter, open_meter
from specbench.measure.loop import run_event_loop
from specbench.run import launch_rounds, preflight
from specbench.run.cells import cell_conversations, cell_directory, cell_spec, make_sender
from specbench.run.journal import Accepted, Journal
from specbench.run.plan import Plan, PlanServer, RunOptions
from specbench.store.failure import FailureRecord, write_failure
from specbench.store.lock import results_lock
from specbench.store.manifest import Manifest, RunStatus, new_run, utc_now
from specbench.store.summary import EnergySummary
from specbench.suite.model import Cell


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

    def more(self, cells: int) -> None:
        """Cells added after `begin`: another launch of precision-targeted points."""


@dataclass(frozen=True)
class NotStarted:
    """A server that would not start: why (one line with its log's last lines), and the
    cells left unrun (its first cell holds the failure.json)."""

    message: str
    not_run: tuple[Cell, ...]


@dataclass
class RunResult:
    """What happened to each cell, in plan order, and each server that would not start."""

    outcomes: dict[Cell, CellOutcome] = field(default_factory=dict)
    not_started: dict[str, NotStarted] = field(default_factory=dict)
    #: Each precision-targeted point's launches and why it stopped (`run.launch_rounds`).
    precision: tuple[launch_rounds.PointDecision, ...] = ()

    @property
    def not_run(self) -> list[Cell]:
        return [cell for server in self.not_started.values() for cell in server.not_run]

    @property
    def status(self) -> RunStatus:
        """How the run ended, when it ran to its end."""
        if self.not_started:
            return "server not started"
        return "cells failed" if self.failed else "completed"

    @property
    def failed(self) -> list[Cell]:
        return [cell for cell, outcome in self.outcomes.items() if outcome.error]

    @property
    def measured(self) -> list[Cell]:
        return [c for c, o in self.outcomes.items() if o.summary and not o.skipped]


def run_plan(plan: Plan, options: RunOptions, progress: RunProgress | None = None) -> RunResult:
    """Measure every missing cell of `plan` (all of them with `force`); blocking.

    The results directory is locked for the whole run (`store.lock`): a second writer is
    refused with the holder's pid, host and start time. Shards of one Slurm campaign share it.
    """
    record = new_run(plan.command)
    shared = plan.command == "slurm-job"
    with results_lock(options.output, record.started_at or utc_now(), shared=shared):
        return _run_locked(
            plan, options, progress or RunProgress(), Journal(options.output, record)
        )


def _run_locked(
    plan: Plan, options: RunOptions, progress: RunProgress, journal: Journal
) -> RunResult:
    # Everything that can be refused is refused here, before the manifest is touched.
    checked = preflight.preflight(plan, options, accept_server_values=options.accept_server_values)
    plan = checked.plan
    journal.plan_known(plan)
    runner = _Runner(plan, options, progress, journal, options.api_key(), checked.accepted)
    existing = journal.run_checked(plan, force=options.force)
    if existing is not None and plan.command != "slurm-job":  # holding the lock alone
        _stop_left_servers(existing, journal, progress)
    status: RunStatus = "interrupted"
    try:
        for index, loaded in checked.workloads.items():
            runner.loaded_workload(index, loaded)
        progress.begin(len(plan.cells), 0 if options.force else len(checked.complete))
        if runner.run_cells(plan.cells) and plan.command != "slurm-job":
            runner.result.precision = _launch_rounds(plan, runner)
        status = runner.result.status
    except SpecbenchError:
        status = "error"
        raise
    finally:
        result = runner.result
        journal.run_finished(status, result.measured, result.failed, result.not_run)
    return runner.result


def _launch_rounds(plan: Plan, runner: _Runner) -> tuple[launch_rounds.PointDecision, ...]:
    """After the planned launches: another launch of each precision-targeted point whose
    launch-level half-widths are still wider than its target, until none is left or each
    reached its cap (`run.launch_rounds` decides from disk). A cell already tried in this
    run is not tried again, nor a server that would not start in it."""

    def decide() -> list[launch_rounds.PointDecision]:
        # --force measures again: only this run's cells count, not launches left on disk.
        only = runner.result.outcomes if runner.options.force else None
        return launch_rounds.decide(plan, runner.options.output, only=only)

    decisions = decide()
    while True:
        cells = [
            cell
            for cell in launch_rounds.next_cells(plan, decisions)
            if cell not in runner.result.outcomes and cell.server not in runner.result.not_started
        ]
        if not cells:
            break
        wanted = sorted({d.point.key for d in decisions if d.next_launch is not None})
        runner.progress.warn(
            f"precision not yet reached over launches at {', '.join(wanted)}: "
            f"another launch ({len(cells)} more cells)"
        )
        runner.progress.more(len(cells))
        if not runner.run_cells(cells):
            break
        decisions = decide()
    runner.journal.precision_decided([decision.record() for decision in decisions])
    return tuple(decisions)


def _stop_left_servers(manifest: Manifest, journal: Journal, progress: RunProgress) -> None:
    """Stop the servers a dead campaign left running (its pid and start time recorded), and
    the container each ran in (its runtime and name recorded): it outlives its client."""
    recorded = {n: s.process for n, s in manifest.servers.items() if s.process is not None}
    for name, identity in recorded.items():
        container = stop_left_container(identity)
        if container is not None:
            progress.warn(
                f"server {name!r}: container {container}, started by an earlier run that "
                "died, was still running; stopped it"
            )
        if left_running(identity):
            pid = identity["pid"]
            stopped = stop_group(pid)
            progress.warn(
                f"server {name!r}: pid {pid}, started by an earlier run that died, was still "
                + ("running; stopped it" if stopped else "running and could not be stopped")
            )
    journal.left_servers_forgotten(recorded)


class _Runner:
    """Runs the cells of one plan; holds what lives as long as the run (workloads, result)."""

    def __init__(
        self,
        plan: Plan,
        options: RunOptions,
        progress: RunProgress,
        journal: Journal,
        api_key: str | None,
        accepted: Accepted,
    ) -> None:
        self.plan = plan
        #: Attached servers whose own values the run records (preflight's `accepted`).
        self.accepted = accepted
        self.options = options
        self.progress = progress
        self.journal = journal
        self.api_key = api_key
        self.result = RunResult()
        self.loaded: dict[int, Workload] = {}
        #: (server, reason) of the energy figures already warned about: once each per run.
        self.energy_warned: set[tuple[str, str]] = set()

    def loaded_workload(self, index: int, loaded: Workload) -> None:
        """A workload's conversations, kept for the run and recorded in the manifest."""
        self.loaded[index] = loaded
        self.journal.workload_loaded(self.plan.keys[index], loaded)

    def workload(self, cell: Cell) -> Workload:
        """The cell's conversations: preflight loaded every workload with a cell to measure."""
        index = cell.workload_index
        if index not in self.loaded:  # a cell found complete by preflight lost its summary
            key = self.plan.keys[index]
            self.loaded_workload(
                index, preflight.load_plan_workload(self.plan.workloads[index], key)
            )
        return self.loaded[index]

    def run_cells(self, cells: Sequence[Cell]) -> bool:
        """Each server start of `cells` in order; False when `fail_fast` stopped it."""
        for (name, _, config), group in itertools.groupby(cells, key=self.plan.start_key):
            interrupt.check()  # a stop signal between servers: stop before the next starts
            self.run_server(self.plan.servers[name], config, list(group))
            if self.options.fail_fast and self.result.failed:
                return False
        return True

    def run_server(
        self, server: PlanServer, config: ServerConfig | None, cells: Sequence[Cell]
    ) -> None:
        """Measure the server's missing cells, restarting it when it dies."""
        pending = []
        for cell in cells:
            directory = cell_directory(self.options.output, cell)
            if store.is_complete(directory) and not self.options.force:
                outcome = CellOutcome(summary=store.read_summary(directory), skipped=True)
                self._done(cell, outcome)
            else:
                pending.append(cell)
        restarts = 0
        launch = cells[0].launch if cells else 0
        while pending:
            spawned = time.perf_counter()
            try:
                with self._started(server, config, launch) as live:
                    pending = run_event_loop(self._measure(server, live, pending))
            except ServerStartFailed as error:
                self.journal.server_time(server, server_s=time.perf_counter() - spawned)
                self._not_started(server, pending, error)
                return
            except ServerError as error:
                self.journal.server_time(server, server_s=time.perf_counter() - spawned)
                for cell in pending:
                    self._fail(cell, str(error))
                return
            self.journal.server_time(server, server_s=time.perf_counter() - spawned)
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

    def _launch_label(self, launch: int) -> str:
        """`, launch 2/3` when the plan has launches; nothing with one; `, launch 4 (for
        precision)` for a launch added after the planned ones (`_launch_rounds`)."""
        total = self.plan.launches
        if launch >= total:
            return f", launch {launch + 1} (for precision)"
        return f", launch {launch + 1}/{total}" if total > 1 else ""

    @contextmanager
    def _started(
        self, server: PlanServer, config: ServerConfig | None, launch: int
    ) -> Iterator[LiveServer]:
        if server.endpoint is not None:  # checked by `_measure` before its first request
            yield LiveServer(base_url=server.endpoint.rstrip("/"), model=server.model, process=None)
            return
        assert config is not None, "a server without an endpoint has a config to start"
        self.progress.server(server.name, "starting" + self._launch_label(launch))
        try:
            with ServerProcess(
                launch_config(config),
                name=server.name,
                log_dir=self.options.log_dir or self.options.output / "logs",
                vllm_bin=self.options.vllm_bin,
                gpus_unchecked=self.options.gpus_unchecked,
                ready_timeout_s=self.options.ready_timeout_s,
                # Recorded before the (long) wait for readiness.
                on_spawn=lambda pid, container: self.journal.server_spawned(
                    server.name, pid, launch, container
                ),
            ) as process:
                provenance = process.provenance
                assert provenance is not None
                self.journal.server_ready(server, provenance)
                for note in process.notes:
                    self.progress.warn(f"server {server.name}: {note}")
                self.progress.server(
                    server.name, f"ready at {process.base_url} in {provenance.startup_s:.0f} s"
                )
                yield LiveServer(process.base_url, config.api_model_name, process)
        finally:
            self.journal.server_stopped(server.name)

    def _energy_warning(self, server: PlanServer, cell: Cell, energy: EnergySummary | None) -> None:
        """Once per server and reason: the cell's energy figures are null, and why."""
        if energy is None or energy.valid or energy.reason in (None, "off"):
            return
        if (server.name, energy.reason) in self.energy_warned:
            return
        self.energy_warned.add((server.name, energy.reason))
        self.progress.warn(
            f"{cell.key}: GPU energy not measured ({energy.reason}): {energy.detail}; its "
            "energy figures are null (this reason is not repeated for this server)"
        )

    def _done(self, cell: Cell, outcome: CellOutcome) -> None:
        self.result.outcomes[cell] = outcome
        self.progress.cell_done(cell, outcome)

    def _fail(self, cell: Cell, message: str) -> None:
        write_failure(
            cell_directory(self.options.output, cell),
            FailureRecord(error_type="ServerError", message=message, at=utc_now()),
        )
        self._done(cell, CellOutcome(summary=None, error=message))

    def _not_started(
        self, server: PlanServer, cells: Sequence[Cell], error: ServerStartFailed
    ) -> None:
        """One failure for a server that would not start; its other cells are not run."""
        first, rest = cells[0], tuple(cells[1:])
        write_failure(
            cell_directory(self.options.output, first),
            FailureRecord(
                error_type=type(error).__name__,
                message=str(error),
                at=utc_now(),
                server_alive=False,
                log_tail=error.log_tail,
            ),
        )
        self._done(first, CellOutcome(summary=None, error=str(error)))
        self.result.not_started[server.name] = NotStarted(str(error), rest)
        if rest:
            keys = ", ".join(cell.key for cell in rest)
            self.progress.server(server.name, f"would not start; {len(rest)} cells not run: {keys}")

    async def _serving(
        self, session: aiohttp.ClientSession, server: PlanServer, live: LiveServer
    ) -> preflight.Serving:
        """Check the server before its first request and record what it serves."""
        serving = await preflight.check_serving(session, server, live, self.api_key)
        live.model = serving.model
        self.journal.server_serving(server.name, serving.model, serving.vllm_version, live.base_url)
        return serving

    async def _measure(
        self, server: PlanServer, live: LiveServer, cells: Sequence[Cell]
    ) -> list[Cell]:
        """Measure `cells` in order; return those left if the server died (failed one excluded)."""
        limit = max(c.concurrency for c in cells) + 8
        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=limit, limit_per_host=0)
        ) as session:
            serving = await self._serving(session, server, live)
            senders: dict[int, Sender] = {}
            first = live.process is not None
            # The launch's source, opened once for its cells (off the loop: a library's
            # init can take a moment); the env is the one the launch was given.
            config = self.plan.launch_config(cells[0]) or server.config
            env = preflight.launch_env(config) if config is not None else dict(os.environ)
            meter = await asyncio.to_thread(open_meter, config, env)
            try:
                for index, cell in enumerate(cells):
                    interrupt.check()  # a safe point: the previous cell is saved or failed
                    if cell.workload_index not in senders:
                        for message in preflight.workload_fit(
                            self.plan,
                            server,
                            live.base_url,
                            cell,
                            cells,
                            self.workload(cell),
                            serving.max_model_len,
                        ):
                            self.progress.warn(message)
                        senders[cell.workload_index] = make_sender(
                            self.plan.workload(cell),
                            session,
                            live.base_url,
                            serving.model,
                            self.api_key,
                            limit,
                        )
                    outcome, alive = await self._cell(
                        server,
                        live,
                        session,
                        senders[cell.workload_index],
                        cell,
                        first=first,
                        energy=meter,
                    )
                    first = False
                    if outcome.error and not alive:
                        return list(cells[index + 1 :])
                    if outcome.error and self.options.fail_fast:
                        return []
            finally:
                meter.close()
                for sender in senders.values():
                    close = getattr(sender, "close", None)
                    if close:
                        await close()
        return []

    async def _cell(
        self,
        server: PlanServer,
        live: LiveServer,
        session: aiohttp.ClientSession,
        sender: Sender,
        cell: Cell,
        *,
        first: bool,
        energy: EnergyMeter,
    ) -> tuple[CellOutcome, bool]:
        """Measure one cell; (its outcome, whether the server still served after a failure)."""
        spec_w = self.plan.workload(cell)
        conversations = cell_conversations(cell, spec_w, self.workload(cell).conversations)
        assert live.model is not None, "set by _serving"
        spec = cell_spec(
            server,
            cell,
            spec_w,
            live.model,
            live.base_url,
            first=first,
            conversations=conversations,
        )
        health: dict[str, bool] = {}  # the liveness verdict, when the cell failed

        async def failure_details() -> dict[str, object]:
            health["alive"] = await live.alive()
            return {"server_alive": health["alive"], "log_tail": live.log_tail()}

        self.journal.run_started(self.plan, self.accepted, force=self.options.force)
        cell_started = time.perf_counter()
        outcome = await run_cell(
            spec,
            conversations,
            session,
            sender,
            cell_directory(self.options.output, cell),
            force=self.options.force,
            api_key=self.api_key,
            progress=self.progress.cell(cell),
            failure_details=failure_details,
            energy=energy,
        )
        if not outcome.skipped:
            window = outcome.summary.duration_s if outcome.summary else 0.0
            self.journal.cell_time(server, cell, time.perf_counter() - cell_started, window)
        self._done(cell, outcome)
        if outcome.summary is not None and not outcome.skipped:
            for message in cell_warnings(outcome.summary):
                self.progress.warn(f"{cell.key}: {message}")
            self._energy_warning(server, cell, outcome.summary.energy)
            self.journal.prefix_cache_reset(server.name, outcome.summary)
        return outcome, health.get("alive", True)
