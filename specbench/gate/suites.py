"""Is the baseline comparable with the results? Suite identity and what changed on servers.

The gate refuses (SpecbenchError, exit 2) results from another suite or with other
workloads: the dataset folder, prompts, concurrency, max_tokens, temperature, warmup and
max_model_len must match. Server settings (a new draft checkpoint, another vLLM build)
are what a gate run is meant to judge, so they only produce notes that say what changed;
`--strict-suite` makes any difference of the full suite hash an error too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.gate.baseline import Baseline, SuiteIdentity


def check_suites(baseline: SuiteIdentity, current: SuiteIdentity, *, strict: bool) -> list[str]:
    """Raise when the two runs measured different things; else notes on what differs."""
    if baseline.name != current.name:
        raise SpecbenchError(
            f"mismatched suites: the baseline comes from suite {baseline.name!r}, the results "
            f"from suite {current.name!r}"
        )
    if baseline.workloads_hash != current.workloads_hash:
        detail = next(
            iter(_diff({"workloads": baseline.workloads}, {"workloads": current.workloads})),
            "workloads differ",
        )
        raise SpecbenchError(
            f"mismatched suites: suite {current.name!r} measures different workloads than the "
            f"baseline ({detail})"
        )
    if baseline.suite_hash != current.suite_hash:
        if strict:
            raise SpecbenchError(
                f"mismatched suites: suite hash {str(current.suite_hash)[:12]} differs from the "
                f"baseline's {str(baseline.suite_hash)[:12]} (--strict-suite)"
            )
        return [
            f"suite {current.name!r}: same workloads; server settings differ from the baseline "
            "(expected for a new draft or build)"
        ]
    if current.name is None:
        return ["no suite in either manifest (specbench bench results): cells compared as-is"]
    return [f"suite {current.name!r}: identical to the baseline's (hash {baseline.suite_hash})"]


def _diff(was: Any, now: Any, path: str = "") -> Iterator[str]:
    """`path: old → new` for every leaf that differs between two JSON-like trees."""
    if isinstance(was, dict) and isinstance(now, dict):
        for key in sorted(set(was) | set(now), key=str):
            yield from _diff(was.get(key), now.get(key), f"{path}.{key}" if path else str(key))
    elif isinstance(was, list) and isinstance(now, list) and len(was) == len(now):
        for index, (a, b) in enumerate(zip(was, now, strict=True)):
            yield from _diff(a, b, f"{path}[{index}]")
    elif was != now:
        yield f"{path}: {was!r} in the baseline, {now!r} now"


def _comparable(server: dict[str, Any]) -> dict[str, Any]:
    """The server summary without fields that repeat `config` (or hold ports and PIDs)."""
    skip = {"command", "model", "speculative"} if server.get("config") else {"command"}
    return {key: value for key, value in server.items() if key not in skip}


def server_notes(baseline: Baseline, current: dict[str, dict[str, Any]]) -> list[str]:
    """What changed in each server's provenance (draft path, vLLM version, command)."""
    notes = []
    for name in sorted(set(baseline.servers) & set(current)):
        was, now = _comparable(baseline.servers[name]), _comparable(current[name])
        changes = list(_diff(was, now, f"servers.{name}"))
        notes.extend(changes[:10])
        if len(changes) > 10:
            notes.append(f"servers.{name}: {len(changes) - 10} more differences")
    return notes
