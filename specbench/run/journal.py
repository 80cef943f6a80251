"""The manifest of one run, written as named events through one object.

Every change a run makes to `manifest.json` is one method here, named for what happened
(run started, workload loaded, server spawned / ready / serving / stopped, prefix-cache
resets counted, run finished); each is one `update_manifest` (a locked read-change-write,
so Slurm shards sharing the directory keep each other's changes). The journal also keeps
the run's cost (seconds per server) in memory until the run's record is finished.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data.loader import Workload
from specbench.launch import ServerConfig, ServerProvenance
from specbench.launch.argv import prefix_caching_off
from specbench.launch.host import process_identity
from specbench.measure.history import thinking_replay_record
from specbench.run.plan import HASH_NEUTRAL_WORKLOAD_DEFAULTS, Plan, PlanServer, claim_suite
from specbench.store.manifest import (
    Manifest,
    RunRecord,
    RunStatus,
    ServerCost,
    WorkloadRecord,
    run_cost,
    update_manifest,
    utc_now,
)
from specbench.store.summary import CellSummary
from specbench.suite.model import NOT_IDENTITY, Cell, WorkloadSpec

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

    def run_started(self, plan: Plan, accepted: Accepted | None = None) -> Manifest:
        """Record the plan's suite, workloads and servers, and this run; refuse a mix.

        `accepted`: attached servers whose own values replace their suite entry's (field →
        (suite's, server's)); the manifest's suite section then holds the server's values.
        """
        return update_manifest(
            self.output,
            lambda m: _claim(m, plan, self.output, accepted or {}).with_run(self.record),
        )

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

        def record(manifest: Manifest) -> Manifest:
            old = manifest.workloads[key]
            new = old.model_copy(
                update={
                    "dataset_source": loaded.source,
                    "dataset_revision": loaded.revision,
                    "num_conversations": len(loaded.conversations),
                }
            )
            return manifest.model_copy(update={"workloads": {**manifest.workloads, key: new}})

        update_manifest(self.output, record)

    def server_spawned(self, name: str, pid: int) -> None:
        """A server process exists: its identity, so a rerun can stop it if this run dies."""
        identity = process_identity(pid)
        update_manifest(self.output, lambda m: m.with_server(name, process=identity))

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
        """This run's record: when it ended, how, which cells, and what it cost."""
        finished = self.record.model_copy(
            update={
                "finished_at": utc_now(),
                "status": status,
                "cells_measured": sorted(c.key for c in measured),
                "cells_failed": sorted(c.key for c in failed),
                "cells_not_run": sorted(c.key for c in not_run),
                "cost": run_cost(list(self.costs.values())),
            }
        )
        update_manifest(self.output, lambda m: m.with_run(finished))

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


def _claim(manifest: Manifest, plan: Plan, output: Path, accepted: Accepted) -> Manifest:
    """Record the plan's suite, workloads and servers; refuse results they would mix with."""
    if plan.suite is not None:
        digest = claim_suite(manifest.suite_hash, plan.suite, output)
        suite = plan.suite.model_dump(mode="json")
        for name in accepted:
            config = plan.servers[name].config
            if config is not None:
                suite["servers"][name] = config.model_dump(mode="json")
        manifest = manifest.model_copy(update={"suite": suite, "suite_hash": digest})
    workloads = dict(manifest.workloads)
    for key, workload in zip(plan.keys, plan.workloads, strict=True):
        spec = workload_identity(workload)
        old = workloads.get(key)
        if old is not None and old.spec != spec:
            changed = next(f for f in {**old.spec, **spec} if old.spec.get(f) != spec.get(f))
            raise SpecbenchError(
                f"{output}: workload {key!r} was measured here with {changed}="
                f"{old.spec.get(changed)!r}, this run asks {spec.get(changed)!r}; give the "
                "workload its own name (--workload-name, or `name` in the suite) or use a "
                "new --output"
            )
        if old is None:
            workloads[key] = WorkloadRecord(
                spec=spec,
                thinking_replay=thinking_replay_record(workload.tokenizer)
                if workload.api == "chat"
                else None,
            )
    manifest = manifest.model_copy(update={"workloads": workloads})
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


def workload_identity(workload: WorkloadSpec) -> dict[str, object]:
    """What defines a workload's cells (concurrencies and repeats only choose which exist)."""
    identity = workload.model_dump(mode="json", exclude=set(NOT_IDENTITY))
    # Fields added later are left out at their default, so older manifests still match.
    return {
        name: value
        for name, value in identity.items()
        if name not in HASH_NEUTRAL_WORKLOAD_DEFAULTS
        or value != HASH_NEUTRAL_WORKLOAD_DEFAULTS[name]
    }


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
