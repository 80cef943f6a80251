"""Whether a plan may measure into a results directory, and what binds the directory to it.

A results directory grows cell by cell. Identity is per cell: a cell is complete when its
folder holds a `summary.json` measured with the same server config and the same measured
workload fields (`IDENTITY_FIELDS` of `suite.model`, declared on each field). So a suite
may gain concurrencies, repeats, workloads or servers, and a rerun into its folder
measures only the new cells; what changes no figure (the suite's name and description, a
workload's timeout, what it keeps) never blocks. A changed measured field of a workload or
server already recorded here is refused, naming the field and both values
(`check_resume`), unless `--force` measures its cells again.

Nothing is written until a cell starts: `bind` is the manifest change the orchestrator
applies then, so a run refused before its first cell leaves nothing that blocks the
corrected one. Pilot cells (a few conversations each) and campaign cells never share a
directory.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.measure.history import thinking_replay_record
from specbench.run.plan import Plan, drop_neutral_server_fields, resolved_suite, suite_hash
from specbench.store.manifest import Manifest, WorkloadRecord
from specbench.suite.model import (
    HASH_NEUTRAL_WORKLOAD_DEFAULTS,
    IDENTITY_FIELDS,
    NOT_IDENTITY,
    Suite,
    WorkloadSpec,
    workload_keys,
)

_ABSENT = object()


def recorded_workload(workload: WorkloadSpec) -> dict[str, object]:
    """A workload as the manifest records it: every field but those choosing which cells
    exist; fields added later are left out at their default, so older records still match.
    """
    identity = workload.model_dump(mode="json", exclude=set(NOT_IDENTITY))
    return {
        name: value
        for name, value in identity.items()
        if name not in HASH_NEUTRAL_WORKLOAD_DEFAULTS
        or value != HASH_NEUTRAL_WORKLOAD_DEFAULTS[name]
    }


def check_resume(manifest: Manifest | None, plan: Plan, output: Path, *, force: bool) -> None:
    """Refuse a plan whose cells would mix with different ones in `output` (one line).

    With `force`, changed workloads and servers are accepted: their cells are measured again.
    """
    if manifest is None:
        return
    pilots = {run.command == "pilot" for run in manifest.runs}
    if pilots and (plan.command == "pilot") not in pilots:
        held = "pilot cells (run --dry-run --pilot)" if True in pilots else "campaign cells"
        raise SpecbenchError(
            f"{output}: holds {held}; pilot and campaign cells never share a results "
            "directory: use a new --output"
        )
    if force:
        return
    _check_workloads(manifest, plan.keys, plan.workloads, output)
    if plan.suite is not None:
        _check_servers(manifest, plan.suite, output)
    for name, server in plan.servers.items():
        old = manifest.servers.get(name)
        if old is not None and None not in (old.gpus, server.gpus) and old.gpus != server.gpus:
            _refuse(output, f"server {name!r}", "gpus", old.gpus, server.gpus)


def check_suite_resume(
    manifest: Manifest | None, suite: Suite, output: Path, *, force: bool
) -> None:
    """`check_resume` for a suite's servers and workloads (the Slurm submitter's check)."""
    if manifest is None or force:
        return
    _check_servers(manifest, suite, output)
    _check_workloads(manifest, workload_keys(suite.workloads), suite.workloads, output)


def _check_workloads(
    manifest: Manifest, keys: Sequence[str], workloads: Sequence[WorkloadSpec], output: Path
) -> None:
    fields = WorkloadSpec.model_fields
    for key, workload in zip(keys, workloads, strict=True):
        record = manifest.workloads.get(key)
        if record is None:
            continue
        new = workload.model_dump(mode="json", include=set(IDENTITY_FIELDS))
        # A field left out of an older record (added later) was at its default.
        old = {
            name: record.spec.get(name, fields[name].get_default(call_default_factory=True))
            for name in new
        }
        _refuse_changed(output, f"workload {key!r}", old, new)


def _check_servers(manifest: Manifest, suite: Suite, output: Path) -> None:
    if manifest.suite is not None and manifest.suite.get("gpus") != suite.gpus:
        _refuse(output, "the suite", "gpus", manifest.suite.get("gpus"), suite.gpus)
    recorded = {**manifest.retired_servers, **((manifest.suite or {}).get("servers") or {})}
    redacted = resolved_suite(suite)["servers"]
    plain = resolved_suite(suite, redact=False)["servers"]
    for name in suite.servers:
        old = recorded.get(name)
        if not isinstance(old, dict):
            continue
        old = dict(old)
        drop_neutral_server_fields(old)
        if old != plain[name]:  # equal: recorded before secrets were left out of records
            _refuse_changed(output, f"server {name!r}", old, redacted[name])


def _refuse_changed(output: Path, what: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    difference = _first_difference("", old, new)
    if difference is not None:
        field, before, after = difference
        _refuse(output, what, field.lstrip("."), before, after)


def _first_difference(path: str, old: object, new: object) -> tuple[str, object, object] | None:
    """The first leaf (dotted path) where `old` and `new` differ; None when equal."""
    if old == new:
        return None
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*new, *(k for k in old if k not in new)]:
            found = _first_difference(f"{path}.{key}", old.get(key, _ABSENT), new.get(key, _ABSENT))
            if found is not None:
                return found
    return path, old, new


def _refuse(output: Path, what: str, field: str, old: object, new: object) -> None:
    shown_old = "(not set)" if old is _ABSENT else repr(old)
    shown_new = "(not set)" if new is _ABSENT else repr(new)
    rename = {
        "workload": "give the workload a new name (`name` in the suite, --workload-name in "
        "bench), ",
        "server": "give the server a new name (its [servers.NAME] table), ",
    }.get(what.split()[0], "")
    raise SpecbenchError(
        f"{output}: {what} was measured here with {field}={shown_old}, this run asks "
        f"{shown_new}; {rename}measure its cells again with --force, or use a new --output"
    )


def with_suite(manifest: Manifest, suite: Suite) -> Manifest:
    """The manifest recording `suite` as its latest; a server of the suite recorded before
    that `suite` leaves out moves to `retired_servers` (its cells are still here)."""
    earlier = (manifest.suite or {}).get("servers") or {}
    retired = {
        **{n: c for n, c in manifest.retired_servers.items() if n not in suite.servers},
        **{n: c for n, c in earlier.items() if n not in suite.servers},
    }
    return manifest.model_copy(
        update={
            "suite": suite.model_dump(mode="json"),
            "suite_hash": suite_hash(suite),
            "retired_servers": retired,
        }
    )


def bind(manifest: Manifest, plan: Plan, *, force: bool) -> Manifest:
    """The manifest with the plan's suite, workloads and servers recorded (at the first cell).

    The suite recorded is this run's (a grown sweep's latest; `with_suite` keeps the
    servers it leaves out); a workload keeps its first record unless `force` measured it
    again.
    """
    if plan.suite is not None:
        manifest = with_suite(manifest, plan.suite)
    workloads = dict(manifest.workloads)
    for key, workload in zip(plan.keys, plan.workloads, strict=True):
        spec = recorded_workload(workload)
        old = workloads.get(key)
        if old is None or (force and old.spec != spec):
            workloads[key] = WorkloadRecord(
                spec=spec,
                thinking_replay=thinking_replay_record(workload.tokenizer)
                if workload.api == "chat"
                else None,
            )
    return manifest.model_copy(update={"workloads": workloads})
