"""`manifest.json`: what a results directory holds and how it was produced, as a typed model.

One reader (`read_manifest`, which also converts a schema-1 manifest in memory) and one
writer (`update_manifest`, a read-change-write under an exclusive `flock` on
`.manifest.lock`, so Slurm shards on several nodes update one manifest without losing each
other's changes). Every invocation that measures appends its own `RunRecord`; earlier
runs' start and finish times are never overwritten.
"""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from specbench import SCHEMA_VERSION, __version__
from specbench.common.errors import SpecbenchError
from specbench.common.model import Frozen
from specbench.common.validation import describe_validation_error
from specbench.launch.provenance import redact_config
from specbench.store import files, layout

#: Lock file beside manifest.json; flock works across NFS (v4) clients, which shards share.
MANIFEST_LOCK = ".manifest.lock"

#: What to do about a corrupt manifest: the cells' own files do not depend on it.
_RESTORE = "restore it from a copy, or measure into a new --output (each cell's files are intact)"

RunStatus = Literal[
    "running", "completed", "cells failed", "server not started", "interrupted", "error"
]


def utc_now() -> str:
    """Wall clock for metadata: UTC ISO-8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ServerRecord(Frozen):
    """One server config of the results: how it was reached and what it serves."""

    baseline: bool = Field(default=False, description="The reference of every speedup.")
    speculative: bool | None = Field(default=None, description="None: unknown (attached).")
    engine: str | None = Field(default=None, description="vllm or emulator; None if attached.")
    endpoint: str | None = Field(default=None, description="Base URL the cells were sent to.")
    model: str | None = Field(default=None, description="Served model name used.")
    gpus: int | None = Field(default=None, description="Divisor of tok/s/GPU.")
    prefix_cache: str | None = Field(default=None, description="How the prefix cache was handled.")
    vllm_version: str | None = Field(default=None, description="From GET /version.")
    accepted_from_server: dict[str, Any] | None = Field(
        default=None,
        description="An attached server that differed from its suite entry, measured with "
        "--accept-server-values: field → {suite, server}; the suite section holds the "
        "server's values. None: it matched (or was started here).",
    )
    provenance: dict[str, Any] | None = Field(
        default=None, description="The last start's ServerProvenance (argv, env, GPUs, timing)."
    )
    process: dict[str, Any] | None = Field(
        default=None,
        description="While started by a run: its process-group leader's pid, host, boot id "
        "and start time (clock ticks after boot), and `container` (runtime, name) when it "
        "runs in a docker or podman container; cleared when stopped. A rerun stops a "
        "server (and its container) a dead campaign left running.",
    )


class WorkloadRecord(Frozen):
    """One workload: its key (the results folder) and everything that defines it."""

    spec: dict[str, Any] = Field(description="The workload as measured (all its fields).")
    dataset_source: str | None = Field(default=None, description="Where the rows came from.")
    dataset_revision: str | None = Field(default=None, description="Hub revision, if any.")
    num_conversations: int | None = Field(default=None, description="Conversations loaded.")
    thinking_replay: dict[str, str] | None = Field(
        default=None,
        description="How later turns carry earlier thinking (replay) and whether the chat "
        "template keeps or drops it (template_field, template_inline: kept | dropped), "
        "checked by rendering when the workload names a tokenizer; None: older results.",
    )


class ServerCost(Frozen):
    """Where one server's time went during one invocation (seconds of wall time)."""

    server: str = Field(description="Server name.")
    gpus: int | None = Field(
        description="GPUs it held (TP × PP × DP): the multiplier of GPU-hours. None: unknown "
        "(an attached endpoint without --gpus); its hours stay out of the GPU-hour totals."
    )
    server_s: float = Field(description="Spawn → stopped (attached: first → last request).")
    starting_s: float = Field(description="Spawn → ready, summed over (re)starts.")
    measuring_s: float = Field(description="Σ measured windows of its cells.")
    other_s: float = Field(
        description="server_s − starting_s − measuring_s: warmup, scrapes, idle waits."
    )
    cell_wall_s: dict[str, float] = Field(
        default_factory=dict,
        description="Cell key → warmup + scrapes + window: what the estimator fits overheads on.",
    )


class RunCost(Frozen):
    """GPU-hours one invocation spent: Σ seconds × gpus / 3600, split by what they paid for."""

    servers: list[ServerCost] = Field(default_factory=list, description="Per server.")
    gpu_hours: float = Field(description="Σ server_s × gpus / 3600.")
    gpu_hours_measuring: float = Field(description="Σ measuring_s × gpus / 3600.")
    gpu_hours_starting: float = Field(description="Σ starting_s × gpus / 3600.")
    gpu_hours_other: float = Field(description="Σ other_s × gpus / 3600.")
    servers_without_gpus: list[str] = Field(
        default_factory=list,
        description="Servers whose GPU count is unknown: left out of every GPU-hour total.",
    )


def run_cost(servers: list[ServerCost]) -> RunCost:
    """Totals of the per-server costs."""

    def hours(field: str) -> float:
        return sum(getattr(s, field) * s.gpus for s in servers if s.gpus is not None) / 3600

    return RunCost(
        servers=servers,
        gpu_hours=hours("server_s"),
        gpu_hours_measuring=hours("measuring_s"),
        gpu_hours_starting=hours("starting_s"),
        gpu_hours_other=hours("other_s"),
        servers_without_gpus=[s.server for s in servers if s.gpus is None],
    )


class LaunchStart(Frozen):
    """One start of a server process, in the order the starts happened."""

    server: str = Field(description="Server name.")
    launch: int = Field(description="Which launch of the server config it served (0-based).")
    pid: int = Field(description="Process id of the server's process-group leader.")
    started_at: str = Field(description="When it was spawned (UTC ISO-8601).")
    start_ticks: int | None = Field(
        default=None, description="Its start time in clock ticks after boot (Linux); None else."
    )
    run: str | None = Field(
        default=None, description="Id of the run (`runs[].id`) that started it."
    )


class LaunchesRecord(Frozen):
    """How the suite's launches were laid out, and every server start that measured them."""

    launches: int = Field(description="Launches of the suite (its largest, with workload ones).")
    order: str = Field(description="interleaved or random (the suite's `launch_order`).")
    seed: int = Field(description="The suite's `launch_seed` (used when random).")
    planned: list[list[str]] = Field(
        default_factory=list,
        description="Per launch (launch 0 first), the server configs in start order.",
    )
    starts: list[LaunchStart] = Field(
        default_factory=list,
        description="Every server start, in the order they happened (restarts included), "
        "across the runs into this directory.",
    )


class PrecisionPoint(Frozen):
    """One precision-targeted point's launches: how many, how precise, why it stopped."""

    server: str = Field(description="Server name.")
    workload: str = Field(description="Workload key.")
    concurrency: int = Field(description="Concurrency of the point.")
    target: float = Field(description="The workload's precision: relative 95% half-width.")
    launches_used: int = Field(
        description="Launches whose every repeat was measured (or failed): the values' count."
    )
    max_launches: int = Field(description="The cap on its launches.")
    half_widths: dict[str, float | None] = Field(
        description="Targeted figure → launch-level relative 95% half-width (Student t over "
        "launch values / their mean); None below two launch values."
    )
    stopped: Literal["precision reached", "cap reached"] | None = Field(
        description="Why it stopped; None: not finished (a rerun continues it)."
    )
    regimes: list[str] = Field(
        default_factory=list,
        description="Targeted figures on which two launches' within-launch 95% intervals do "
        "not overlap (launches in different regimes); empty: none, or no intervals.",
    )


class RunRecord(Frozen):
    """One invocation that measured into this directory."""

    id: str = Field(description="Unique per invocation: start time, host and pid.")
    command: str = Field(description="run, bench, slurm-job or pilot.")
    argv: list[str] = Field(default_factory=list, description="Command line.")
    host: str | None = Field(default=None, description="Machine it ran on.")
    started_at: str | None = Field(default=None, description="UTC ISO-8601.")
    finished_at: str | None = Field(default=None, description="UTC ISO-8601; None if running.")
    status: RunStatus = Field(default="running", description="How it ended.")
    cells_measured: list[str] = Field(default_factory=list, description="Cell keys measured.")
    cells_failed: list[str] = Field(default_factory=list, description="Cell keys that failed.")
    cells_not_run: list[str] = Field(
        default_factory=list,
        description="Cell keys skipped because their server would not start (its failure is "
        "recorded once, in the failure.json of the first of its cells).",
    )
    cost: RunCost | None = Field(
        default=None, description="GPU-hours spent, by server; None in older manifests."
    )


class Manifest(Frozen):
    """The whole `manifest.json`."""

    schema_version: Literal[2] = Field(default=2, description="Results format version.")
    created_at: str = Field(description="When the directory was first written (UTC).")
    specbench_version: str = Field(description="specbench that last wrote the manifest.")
    git_sha: str | None = Field(default=None, description="Its checkout's commit, if any.")
    python: str = Field(description="Python version that last wrote the manifest.")
    suite: dict[str, Any] | None = Field(default=None, description="The suite, resolved.")
    suite_hash: str | None = Field(default=None, description="sha256 of the resolved suite.")
    retired_servers: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Servers an earlier suite measured here and the latest suite left out, "
        "by name → their resolved suite entry: a suite that adds one back is checked "
        "against it as against a server still in the suite.",
    )
    servers: dict[str, ServerRecord] = Field(default_factory=dict, description="By name.")
    workloads: dict[str, WorkloadRecord] = Field(default_factory=dict, description="By key.")
    runs: list[RunRecord] = Field(default_factory=list, description="Every invocation.")
    slurm: dict[str, Any] | None = Field(
        default=None, description="The Slurm executor's shards and jobs (its own section)."
    )
    launches: LaunchesRecord | None = Field(
        default=None,
        description="The launch layout and the realised order of server starts; None in "
        "results measured before launches, and where nothing was started (attached servers).",
    )
    precision_launches: list[PrecisionPoint] | None = Field(
        default=None,
        description="Each precision-targeted point's launches, achieved half-widths and stop "
        "reason, as the last run decided them; None in results measured before, or without "
        "a precision target.",
    )
    converted_from: int | None = Field(
        default=None, description="Set in memory when read from an older schema; never written."
    )

    @property
    def baselines(self) -> set[str]:
        """Server names marked baseline."""
        return {name for name, server in self.servers.items() if server.baseline}

    def with_server(self, name: str, **fields: Any) -> Manifest:
        """The manifest with `fields` set on server `name` (created when new)."""
        old = self.servers.get(name, ServerRecord())
        servers = {**self.servers, name: old.model_copy(update=fields)}
        return self.model_copy(update={"servers": servers})

    def with_run(self, run: RunRecord) -> Manifest:
        """The manifest with `run` appended, or replacing the record of the same id."""
        runs = [r for r in self.runs if r.id != run.id]
        position = next((i for i, r in enumerate(self.runs) if r.id == run.id), len(runs))
        runs.insert(position, run)
        return self.model_copy(update={"runs": runs})

    def with_launch_start(self, layout: LaunchesRecord | None, start: LaunchStart) -> Manifest:
        """The manifest with `start` appended to the order of server starts; `layout` (the
        running suite's launches, order and seed) replaces the recorded one, the starts kept."""
        record = self.launches or layout
        if record is None:
            return self
        if layout is not None:
            record = layout.model_copy(update={"starts": record.starts})
        record = record.model_copy(update={"starts": [*record.starts, start]})
        return self.model_copy(update={"launches": record})

    def with_slurm(self, updates: dict[str, Any]) -> Manifest:
        """The manifest with `updates` merged into the Slurm section, nested keys one by one."""
        merged = dict(self.slurm or {})
        _merge(merged, updates)
        return self.model_copy(update={"slurm": merged})

    def run(self, run_id: str) -> RunRecord | None:
        return next((r for r in self.runs if r.id == run_id), None)


def _merge(target: dict[str, Any], updates: dict[str, Any]) -> None:
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            target[key] = dict(target[key])
            _merge(target[key], value)
        else:
            target[key] = value


def new_run(command: str) -> RunRecord:
    """A run record for this process, started now."""
    started = utc_now()
    host = socket.gethostname()
    return RunRecord(
        id=f"{started}/{host}/{os.getpid()}",
        command=command,
        argv=list(sys.argv),
        host=host,
        started_at=started,
    )


def git_sha() -> str | None:
    """The specbench checkout's commit, when it runs from one."""
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def read_manifest(root: Path) -> Manifest | None:
    """The manifest of `root`, None when there is none; schema 1 is converted in memory."""
    path = root / layout.MANIFEST
    if not path.exists():
        return None
    try:
        raw = files.read_json(path)
    except SpecbenchError as error:
        raise SpecbenchError(f"{error}; {_RESTORE}") from None
    version = raw.get("schema_version")
    if version == 1:
        raw = _from_v1(raw)
    elif version != SCHEMA_VERSION:
        raise SpecbenchError(
            f"{path}: schema_version {version!r} is not one this specbench reads "
            f"(1 or {SCHEMA_VERSION})"
        )
    try:
        return Manifest.model_validate(raw)
    except ValidationError as error:
        message = describe_validation_error(error, Manifest, "", path)
        raise SpecbenchError(f"{message}; {_RESTORE}") from None


def update_manifest(root: Path, change: Callable[[Manifest], Manifest]) -> Manifest:
    """Apply `change` to the manifest (a new one when absent) under the directory lock."""
    with _locked(root):
        manifest = read_manifest(root)
        if manifest is not None and manifest.converted_from is not None:
            raise SpecbenchError(
                f"{root / layout.MANIFEST}: schema_version {manifest.converted_from} (an older "
                "specbench); report, gate and lossless read it, but new cells need a new --output"
            )
        if manifest is None:
            manifest = Manifest(created_at=utc_now(), specbench_version=__version__, python="")
        manifest = change(manifest).model_copy(
            update={
                "specbench_version": __version__,
                "git_sha": git_sha(),
                "python": sys.version.split()[0],
            }
        )
        # Secrets (env values, --api-key) never reach the file, in any copy of a config.
        # A field added later stays out of the file until it is set: an older directory
        # rewritten without new facts keeps its manifest as it was.
        unset = {"launches"} if manifest.launches is None else set()
        if manifest.precision_launches is None:
            unset.add("precision_launches")
        files.write_json(
            root / layout.MANIFEST,
            redact_config(manifest.model_dump(mode="json", exclude={"converted_from", *unset})),
        )
        return manifest


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with (root / MANIFEST_LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_V1_SERVER_FIELDS = set(ServerRecord.model_fields)


def _from_v1(raw: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 manifest in the schema-2 shape (readers only; never written back).

    Schema 1 had free-form `servers`, `runs` (one per `bench`) and one `campaign` section
    that each `run` overwrote; their fields map one to one where they exist.
    """
    servers = {
        str(name): {k: v for k, v in entry.items() if k in _V1_SERVER_FIELDS}
        for name, entry in (raw.get("servers") or {}).items()
        if isinstance(entry, dict)
    }
    suite = raw.get("suite") if isinstance(raw.get("suite"), dict) else None
    for name, entry in ((suite or {}).get("servers") or {}).items():
        if isinstance(entry, dict) and entry.get("baseline") is True:
            servers.setdefault(str(name), {})["baseline"] = True
    runs = []
    for index, entry in enumerate(raw.get("runs") or []):
        if isinstance(entry, dict):
            runs.append(
                {
                    "id": f"v1-run-{index}",
                    "command": str(entry.get("command", "bench")),
                    "argv": [str(a) for a in entry.get("argv") or []],
                    "started_at": entry.get("started_at"),
                    "status": "completed",
                }
            )
    campaign = raw.get("campaign")
    if isinstance(campaign, dict):
        runs.append(
            {
                "id": "v1-campaign",
                "command": "run",
                "started_at": campaign.get("started_at"),
                "finished_at": campaign.get("finished_at"),
                "status": "cells failed" if campaign.get("cells_failed") else "completed",
                "cells_measured": list(campaign.get("cells_completed") or []),
                "cells_failed": list(campaign.get("cells_failed") or []),
            }
        )
    return {
        "schema_version": 2,
        "created_at": raw.get("created_at") or "",
        "specbench_version": str(raw.get("specbench_version", "")),
        "git_sha": raw.get("git_sha"),
        "python": str(raw.get("python", "")),
        "suite": suite,
        "suite_hash": raw.get("suite_hash"),
        "servers": servers,
        "runs": runs,
        "slurm": raw.get("slurm") if isinstance(raw.get("slurm"), dict) else None,
        "converted_from": 1,
    }
