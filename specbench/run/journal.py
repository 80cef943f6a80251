"""The manifest of one run, written as named events through one object.

Every change a run makes to `manifest.json` is one method here, named for what happened
(run started, workload loaded, server spawned / ready / serving / stopped, prefix-cache
resets counted, run finished); each is one `update_manifest` (a locked read-change-write,
so Slurm shards sharing the directory keep each other's changes). The journal also keeps
the run's cost (seconds per server) in memory until the run's record is finished.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specbench.data.loader import Workload
from specbench.launch import ServerConfig, ServerProvenance
from specbench.launch.argv import prefix_caching_off
from specbench.launch.container import ContainerStart
from specbench.launch.host import process_identity
from specbench.run.plan import Plan, PlanServer
from specbench.run.resume import bind, check_resume
from specbench.store.manifest import (
    LaunchesRecord,
    LaunchStart,
    Manifest,
    PrecisionPoint,
    RunRecord,
    RunStatus,
    ServerCost,
    read_manifest,
    run_cost,
    update_manifest,
    utc_now,
)
from specbench.store.summary import CellSummary
from specbench.suite.model import Cell

#: Server → field → (the suite's value, the server's), where an attached server's won.
Accepted = Mapping[str, Mapping[str, tuple[Any, Any]]]


@dataclass
class Journal:
    """One run's writes to the manifest of `output`, and its cost so far."""

    output: Path
    record: RunRecord
    costs: dict[str, ServerCost] = field(default_factory=dict)
    #: Per server: prefix-cache resets verified / refused since it last started serving.
    _resets: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Per server: the detail of its last refused reset, this run.
    _last_reset_failure: dict[str, str] = field(default_factory=dict)
    #: Whether the directory records this run's plan yet (`run_started`).
    _bound: bool = False
    #: Workloads loaded, by key, for the record made when the run starts.
    _loaded: dict[str, Workload] = field(default_factory=dict)
    #: The plan's launch layout (`plan_known`), recorded with the first server start.
    _layout: LaunchesRecord | None = None

    def run_checked(self, plan: Plan, *, force: bool) -> Manifest | None:
        """Before anything runs: refuse results the plan would mix with (`run.resume`).

        Nothing is bound yet; the manifest is rewritten as it is, so one that cannot be
        written is found before any server starts. Returns it (None: a new directory).
        """
        existing = read_manifest(self.output)
        check_resume(existing, plan, self.output, force=force)
        if existing is not None:
            update_manifest(self.output, lambda manifest: manifest)
        return existing

    def plan_known(self, plan: Plan) -> None:
        """The plan passed preflight: keep its launch layout for the first server start."""
        suite = plan.suite
        if suite is not None:
            self._layout = LaunchesRecord(
                launches=suite.planned_launches,
                order=suite.launch_order,
                seed=suite.launch_seed,
                planned=suite.launch_orders(),
            )

    def run_started(self, plan: Plan, accepted: Accepted, *, force: bool) -> None:
        """The first cell starts: record the plan's suite, workloads and servers, and this run.

        Not before: a run refused earlier (a context too short, a server that would not
        start) leaves nothing that blocks the corrected one. `accepted`: attached servers
        whose own values replace their suite entry's (field → (suite's, server's)); the
        manifest's suite section then holds the server's values.
        """
        if self._bound:
            return

        def bind(manifest: Manifest) -> Manifest:
            manifest = _claim(manifest, plan, self.output, accepted, force).with_run(self.record)
            for key, loaded in self._loaded.items():
                manifest = _with_loaded(manifest, key, loaded)
            return manifest

        update_manifest(self.output, bind)
        self._bound = True

    def left_servers_forgotten(self, names: Iterable[str]) -> None:
        """Servers an earlier run left running were stopped (or could not be): forget them."""
        names = list(names)
        if not names:
            return

        def forget(manifest: Manifest) -> Manifest:
            for name in names:
                manifest = manifest.with_server(name, process=None)
            return manifest

        update_manifest(self.output, forget)

    def workload_loaded(self, key: str, loaded: Workload) -> None:
        """The workload's rows were loaded: where from, which revision, how many."""
        self._loaded[key] = loaded
        if self._bound:  # else recorded when the run starts
            update_manifest(self.output, lambda m: _with_loaded(m, key, loaded))

    def server_spawned(
        self, name: str, pid: int, launch: int = 0, container: ContainerStart | None = None
    ) -> None:
        """A server process exists: its identity, so a rerun can stop it if this run dies
        (with its container's runtime and name, which outlives the process), and its place in
        the order of server starts (which launch it serves)."""
        identity = process_identity(pid)
        if identity is not None and container is not None and container.name is not None:
            identity["container"] = {
                "runtime": container.launcher.executable,
                "name": container.name,
            }
        ticks = identity.get("start_ticks") if identity else None
        start = LaunchStart(
            server=name,
            launch=launch,
            pid=pid,
            started_at=utc_now(),
            start_ticks=ticks if isinstance(ticks, int) else None,
            run=self.record.id,
        )

        def spawned(manifest: Manifest) -> Manifest:
            manifest = manifest.with_server(name, process=identity)
            return manifest.with_launch_start(self._layout, start)

        update_manifest(self.output, spawned)

    def server_ready(self, server: PlanServer, provenance: ServerProvenance) -> None:
        """A started server is ready: its provenance (argv, env, GPUs, timing)."""
        self.server_time(server, starting_s=provenance.startup_s)
        dumped = provenance.model_dump(mode="json")
        update_manifest(self.output, lambda m: m.with_server(server.name, provenance=dumped))

    def server_stopped(self, name: str) -> None:
        """A started server's process is gone (or never started)."""
        update_manifest(self.output, lambda m: m.with_server(name, process=None))

    def server_serving(self, name: str, model: str, version: str | None, endpoint: str) -> None:
        """A server answers /metrics and /v1/models: what it serves, at which URL."""
        self._resets[name] = {}
        update_manifest(
            self.output,
            lambda m: m.with_server(name, model=model, vllm_version=version, endpoint=endpoint),
        )

    def prefix_cache_reset(self, name: str, summary: CellSummary) -> None:
        """A cell asked for a prefix-cache reset; record the tally the servers answered."""
        if summary.prefix_cache_reset is None:
            return
        tally = self._resets.setdefault(name, {})
        kind = "verified" if summary.prefix_cache_reset else "refused"
        tally[kind] = tally.get(kind, 0) + 1
        if not summary.prefix_cache_reset:
            self._last_reset_failure[name] = summary.prefix_cache_reset_detail or "?"
        text = _prefix_cache_record(tally, self._last_reset_failure.get(name))
        update_manifest(self.output, lambda m: m.with_server(name, prefix_cache=text))

    def run_finished(
        self,
        status: RunStatus,
        measured: Iterable[Cell],
        failed: Iterable[Cell],
        not_run: Iterable[Cell] = (),
    ) -> None:
        """This run's record: when it ended, how, which cells, and what it cost.

        A run that neither started a cell nor failed one (refused first) leaves no record.
        """
        measured_keys = sorted(c.key for c in measured)
        failed_keys = sorted(c.key for c in failed)
        if not self._bound and not measured_keys and not failed_keys:
            return
        finished = self.record.model_copy(
            update={
                "finished_at": utc_now(),
                "status": status,
                "cells_measured": measured_keys,
                "cells_failed": failed_keys,
                "cells_not_run": sorted(c.key for c in not_run),
                "cost": run_cost(list(self.costs.values())),
            }
        )
        update_manifest(self.output, lambda m: m.with_run(finished))

    def precision_decided(self, points: Sequence[PrecisionPoint]) -> None:
        """Each precision-targeted point's launches and why it stopped (`run.launch_rounds`),
        replacing an earlier run's: the decision is recomputed from disk each run."""
        if points and (self._bound or read_manifest(self.output) is not None):
            update_manifest(
                self.output, lambda m: m.model_copy(update={"precision_launches": list(points)})
            )

    def server_time(self, server: PlanServer, **seconds: float) -> None:
        """Add seconds (server_s, starting_s, measuring_s) to the server's cost."""
        old = self.costs.get(server.name) or ServerCost(
            server=server.name, gpus=server.gpus, server_s=0, starting_s=0, measuring_s=0, other_s=0
        )
        new = old.model_copy(update={k: getattr(old, k) + v for k, v in seconds.items()})
        other = max(0.0, new.server_s - new.starting_s - new.measuring_s)
        self.costs[server.name] = new.model_copy(update={"other_s": other})

    def cell_time(self, server: PlanServer, cell: Cell, wall_s: float, window_s: float) -> None:
        """A measured cell's window (the server's measuring time) and its whole wall time."""
        self.server_time(server, measuring_s=window_s)
        cost = self.costs[server.name]
        walls = {**cost.cell_wall_s, cell.key: round(wall_s, 3)}
        self.costs[server.name] = cost.model_copy(update={"cell_wall_s": walls})


def _claim(
    manifest: Manifest, plan: Plan, output: Path, accepted: Accepted, force: bool
) -> Manifest:
    """Record the plan's suite, workloads (`run.resume.bind`) and servers."""
    check_resume(manifest, plan, output, force=force)  # a change since `run_checked`
    manifest = bind(manifest, plan, force=force)  # the suite with accepted servers' values
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
        differences = accepted.get(server.name)
        if differences:
            manifest = manifest.with_server(
                server.name,
                accepted_from_server={
                    field: {"suite": ours, "server": theirs}
                    for field, (ours, theirs) in differences.items()
                },
            )
            if "speculative" in differences:
                manifest = manifest.with_server(
                    server.name, speculative=differences["speculative"][1]
                )
    return manifest


def _with_loaded(manifest: Manifest, key: str, loaded: Workload) -> Manifest:
    """The manifest with where workload `key`'s rows came from and how many."""
    new = manifest.workloads[key].model_copy(
        update={
            "dataset_source": loaded.source,
            "dataset_revision": loaded.revision,
            "num_conversations": len(loaded.conversations),
        }
    )
    return manifest.model_copy(update={"workloads": {**manifest.workloads, key: new}})


def _prefix_cache_mode(config: ServerConfig | None) -> str:
    """The manifest's claim before any cell: what will be tried, never what happened."""
    if prefix_caching_off(config):
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
