"""A plan: servers × workloads × concurrencies × repeats, and the options of running it.

`specbench run` builds a plan from a suite; `specbench bench` builds a one-server,
one-workload plan from its flags. A server is either "start this config" or "attach to
this URL". `RunOptions` is defined once here (its defaults in `common/defaults.py`, which
the CLI reads too), and a Slurm job receives it as JSON.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import Field, ValidationError

from specbench.common.defaults import MAX_RESTARTS, READY_TIMEOUT_S
from specbench.common.errors import SpecbenchError
from specbench.common.model import Frozen
from specbench.common.naming import check_name
from specbench.common.validation import describe_validation_error
from specbench.launch.config import (
    EmulatorOverrides,
    ServerConfig,
    SpeculativeConfig,
    hash_neutral_defaults,
)
from specbench.launch.provenance import redact_config
from specbench.run import options_help
from specbench.suite.model import (
    HASH_NEUTRAL_SUITE_DEFAULTS,
    HASH_NEUTRAL_WORKLOAD_DEFAULTS,
    SUITE_FIELDS_OUT_OF_HASH,
    WORKLOAD_FIELDS_OUT_OF_HASH,
    Cell,
    Suite,
    WorkloadSpec,
    workload_keys,
)


class RunOptions(Frozen):
    """How to run a plan: where results go, and what to do about servers and failures.

    Each description is the option's `--help` too (`options_help`)."""

    output: Path = Field(description=options_help.OUTPUT)
    force: bool = Field(default=False, description=options_help.FORCE)
    fail_fast: bool = Field(default=False, description=options_help.FAIL_FAST)
    max_restarts: int = Field(default=MAX_RESTARTS, ge=0, description=options_help.MAX_RESTARTS)
    vllm_bin: str | None = Field(default=None, description=options_help.VLLM_BIN)
    ready_timeout_s: float = Field(
        default=READY_TIMEOUT_S, gt=0, description=options_help.READY_TIMEOUT_S
    )
    api_key_env: str | None = Field(default=None, description=options_help.API_KEY_ENV)
    servers: tuple[str, ...] = Field(default=(), description=options_help.SERVERS)
    workloads: tuple[str, ...] = Field(default=(), description=options_help.WORKLOADS)
    points: tuple[tuple[str, str, int], ...] = Field(default=(), description=options_help.POINTS)
    endpoints: dict[str, str] = Field(default_factory=dict, description=options_help.ENDPOINTS)
    log_dir: Path | None = Field(
        default=None, description="Server logs; None is OUTPUT/logs (Slurm shards use their own)."
    )
    accept_server_values: bool = Field(default=False, description=options_help.ACCEPT_SERVER_VALUES)
    gpus_unchecked: bool = Field(default=False, description=options_help.GPUS_UNCHECKED)

    def api_key(self) -> str | None:
        """The API key from `api_key_env`; one line when that variable is not set."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise SpecbenchError(
                f"--api-key-env: environment variable {self.api_key_env} is not set"
            )
        return key

    @classmethod
    def parse(cls, source: str, data: object) -> RunOptions:
        """Validate options from JSON (a Slurm job's options file); errors are one line."""
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            raise SpecbenchError(describe_validation_error(error, cls, "", source)) from None


@dataclass(frozen=True)
class PlanServer:
    """A server of the plan: a config to start, or a URL to attach to (or both: attach)."""

    name: str
    config: ServerConfig | None
    endpoint: str | None
    model: str | None
    #: Divisor of tok/s/GPU; None when unknown (bench without --gpus): per server only.
    gpus: int | None
    baseline: bool

    @property
    def attached(self) -> bool:
        return self.endpoint is not None


@dataclass(frozen=True)
class Plan:
    """Everything one invocation measures, cells in run order."""

    command: str
    servers: dict[str, PlanServer]
    workloads: tuple[WorkloadSpec, ...]
    keys: tuple[str, ...]
    cells: tuple[Cell, ...]
    suite: Suite | None = None

    def workload(self, cell: Cell) -> WorkloadSpec:
        return self.workloads[cell.workload_index]

    def launch_config(self, cell: Cell) -> ServerConfig | None:
        """The config to start for `cell` (the workload's max_model_len applied)."""
        if self.suite is None:
            return None
        return self.suite.server_config_for(cell)

    def start_key(self, cell: Cell) -> tuple[str, int, ServerConfig | None]:
        """What one server start serves: consecutive cells with an equal key share a process
        (server, launch, the config to start); a new key is a fresh start."""
        return (cell.server, cell.launch, self.launch_config(cell))

    @property
    def launches(self) -> int:
        """How many launches the plan's suite asks of a server config (1 without a suite)."""
        return self.suite.planned_launches if self.suite is not None else 1


def resolved_suite(suite: Suite, *, redact: bool = True) -> dict[str, Any]:
    """The suite as hashed: JSON without `[slurm]`, `source`, `data_dir` and the number of
    launches, fields added later left out at their default, secret values redacted (unless
    `redact` is False).

    `data_dir` is a location, like `source`: what it selects is already in each workload's
    resolved `dataset` spec. `launches` (the suite's and a workload's) says how many fresh
    server starts measure the cells, not what one measures: a campaign grown from 2 to 3
    launches keeps its hash and measures only the third's cells."""
    excluded = {"source", "slurm", "data_dir", *SUITE_FIELDS_OUT_OF_HASH}
    resolved = suite.model_dump(mode="json", exclude=excluded)
    if redact:
        resolved = redact_config(resolved)
    _drop_defaults(resolved, HASH_NEUTRAL_SUITE_DEFAULTS)
    for server in resolved.get("servers", {}).values():
        drop_neutral_server_fields(server)
    for workload in resolved.get("workloads", []):
        _drop_defaults(workload, HASH_NEUTRAL_WORKLOAD_DEFAULTS)
        for name in WORKLOAD_FIELDS_OUT_OF_HASH:
            workload.pop(name, None)
    return resolved


def drop_neutral_server_fields(server: dict[str, Any]) -> None:
    """Remove a resolved server's fields added after schema 2 that keep their default
    (declared `hash_neutral` on the field, its speculative table's, or the emulator
    setting)."""
    _drop_defaults(server, hash_neutral_defaults(ServerConfig))
    speculative = server.get("speculative")
    if isinstance(speculative, dict):
        _drop_defaults(speculative, hash_neutral_defaults(SpeculativeConfig))
    emulator = server.get("emulator")
    if isinstance(emulator, dict):
        _drop_defaults(emulator, hash_neutral_defaults(EmulatorOverrides))


def _drop_defaults(table: dict[str, Any], defaults: dict[str, object]) -> None:
    for name, default in defaults.items():
        if table.get(name) == default:
            table.pop(name, None)


def suite_hash(suite: Suite, *, redact: bool = True) -> str:
    """sha256 of the resolved suite (sorted keys): two runs of the same campaign match.

    `[slurm]` says where cells run, not what they measure: it stays out of the hash, so a
    local run and a Slurm run share one results directory. So do secret values (env
    credentials, `--api-key X`; launch.provenance's rule): a new token resumes. Fields
    added later leave the hash of a suite that keeps their default unchanged.
    """
    resolved = resolved_suite(suite, redact=redact)
    return hashlib.sha256(orjson.dumps(resolved, option=orjson.OPT_SORT_KEYS)).hexdigest()


def select_cells(suite: Suite, options: RunOptions) -> list[Cell]:
    """The suite's cells restricted to `options.servers`, `options.workloads` and
    `options.points` (a point outside the suite is one line naming it)."""
    cells = suite.expand()
    unknown = [name for name in options.servers if name not in suite.servers]
    if unknown:
        raise SpecbenchError(
            f"--server {unknown[0]!r}: not in the suite (have {', '.join(suite.servers)})"
        )
    keys = workload_keys(suite.workloads)
    missing = [key for key in options.workloads if key not in keys]
    if missing:
        raise SpecbenchError(f"workload {missing[0]!r}: not in the suite (have {', '.join(keys)})")
    if options.servers:
        cells = [c for c in cells if c.server in options.servers]
    if options.workloads:
        cells = [c for c in cells if c.workload in options.workloads]
    if options.points:
        existing = {(c.server, c.workload, c.concurrency) for c in suite.expand()}  # unfiltered
        for server, workload, concurrency in options.points:
            if (server, workload, concurrency) not in existing:
                raise SpecbenchError(
                    f"planned cell {server}/{workload}/c{concurrency}: not a point of the suite "
                    f"(servers {', '.join(suite.servers)}; workloads {', '.join(keys)})"
                )
        wanted = set(options.points)
        cells = [c for c in cells if (c.server, c.workload, c.concurrency) in wanted]
    if not cells:
        raise SpecbenchError("the selection matches no cell of the suite")
    return cells


def plan_suite(suite: Suite, options: RunOptions, *, command: str = "run") -> Plan:
    """The plan of a suite: every selected cell; `--endpoint` servers are attached."""
    for name in options.endpoints:
        if name not in suite.servers:
            raise SpecbenchError(f"--endpoint {name}=...: no server {name!r} in the suite")
    servers = {
        name: PlanServer(
            name=name,
            config=config,
            endpoint=options.endpoints.get(name),
            model=config.api_model_name,
            gpus=suite.gpus_for(name),
            baseline=config.baseline,
        )
        for name, config in suite.servers.items()
    }
    # An attached server cannot be started afresh: its precision-targeted points keep the
    # workload's own launches (a cell's within-launch precision), not the three precision
    # plans on servers the run starts.
    cells = [
        cell
        for cell in select_cells(suite, options)
        if cell.server not in options.endpoints
        or cell.launch < suite.launches_of(cell.workload_index)
    ]
    return Plan(
        command=command,
        servers=servers,
        workloads=tuple(suite.workloads),
        keys=tuple(workload_keys(suite.workloads)),
        cells=tuple(cells),
        suite=suite,
    )


def plan_endpoint(
    endpoint: str,
    workload: WorkloadSpec,
    *,
    label: str,
    model: str | None,
    gpus: int | None,
    repeats: int,
) -> Plan:
    """The plan of `bench`: one attached server, one workload."""
    if not endpoint.startswith(("http://", "https://")):
        raise SpecbenchError(f"--endpoint must be an http(s) URL, got {endpoint!r}")
    try:
        check_name("--label", label)
    except ValueError as error:
        raise SpecbenchError(str(error)) from None
    key = workload_keys([workload])[0]
    cells = tuple(
        Cell(
            server=label,
            workload_index=0,
            workload=key,
            dataset=workload.dataset,
            concurrency=concurrency,
            repeat=repeat,
        )
        for concurrency in workload.concurrency
        for repeat in range(repeats)
    )
    server = PlanServer(
        name=label, config=None, endpoint=endpoint, model=model, gpus=gpus, baseline=False
    )
    return Plan("bench", {label: server}, (workload,), (key,), cells)


def parse_concurrencies(text: str) -> list[int]:
    """`1,4,16` → [1, 4, 16]; anything else is a one-line error naming --concurrency."""
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SpecbenchError(
            f"--concurrency: expected comma-separated integers like 1,4,16, got {text!r}"
        ) from None
    if not levels:
        raise SpecbenchError("--concurrency: give at least one level, e.g. 1,4,16")
    return levels


def parse_endpoints(values: Sequence[str]) -> dict[str, str]:
    """`NAME=URL` pairs; a malformed one is a one-line error naming --endpoint."""
    endpoints: dict[str, str] = {}
    for value in values:
        name, sep, url = value.partition("=")
        if not sep or not name or not url.startswith(("http://", "https://")):
            raise SpecbenchError(f"--endpoint expects NAME=http://host:port, got {value!r}")
        endpoints[name] = url
    return endpoints
