"""Reading results directories: every `summary.json` through the contract, and the manifest.

A results directory holds `manifest.json` and, per cell,
`<label>/<dataset-slug>/c<concurrency>/r<repeat>/summary.json` (a failed cell holds
`failure.json` instead). Nothing here touches the network or pandas.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from specbench import SCHEMA_VERSION
from specbench.common.errors import SpecbenchError
from specbench.store.summary import CellSummary


@dataclass(frozen=True, slots=True)
class LoadedCell:
    """One `summary.json` with where it was found."""

    results_dir: Path
    label: str
    summary: CellSummary
    path: Path
    is_baseline: bool


@dataclass(frozen=True, slots=True)
class FailedCell:
    """One cell whose `failure.json` says why it has no summary."""

    results_dir: Path
    path: Path
    reason: str


def read_manifest(results_dir: Path) -> dict[str, Any]:
    """`manifest.json` as a dict; empty when absent (older or hand-assembled directories)."""
    path = results_dir / "manifest.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise SpecbenchError(f"{path}: not readable JSON ({error})") from error
    if not isinstance(data, dict):
        raise SpecbenchError(f"{path}: expected a JSON object")
    return data


def manifest_baselines(manifest: dict[str, Any]) -> set[str]:
    """Server names marked `baseline: true` under `servers` or `suite.servers`."""
    suite = manifest.get("suite")
    sections = [manifest.get("servers"), suite.get("servers") if isinstance(suite, dict) else None]
    return {
        str(name)
        for servers in sections
        if isinstance(servers, dict)
        for name, server in servers.items()
        if isinstance(server, dict) and server.get("baseline") is True
    }


def _read_raw(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise SpecbenchError(f"{path}: not readable JSON ({error})") from error
    if not isinstance(raw, dict) or "schema_version" not in raw:
        raise SpecbenchError(f"{path}: not a specbench summary (no schema_version)")
    return raw


def _check_versions(raws: Sequence[tuple[Path, dict[str, Any]]]) -> None:
    versions: dict[Any, Path] = {}
    for path, raw in raws:
        versions.setdefault(raw["schema_version"], path)
    if len(versions) > 1:
        shown = ", ".join(f"{v!r} ({p})" for v, p in versions.items())
        raise SpecbenchError(
            f"mixed schema versions in the results: {shown}; report one version at a time"
        )
    for version, path in versions.items():
        if version != SCHEMA_VERSION:
            raise SpecbenchError(
                f"{path}: schema_version {version!r} is not supported (this specbench reads "
                f"{SCHEMA_VERSION}); use the specbench version that wrote it"
            )


def _validate(path: Path, raw: dict[str, Any]) -> CellSummary:
    try:
        return CellSummary.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SpecbenchError(
            f"{path}: not a specbench summary ({where}: {first['msg']})"
        ) from error


def _failure_reason(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return "unreadable failure.json"
    if isinstance(data, dict):
        for key in ("error", "message", "reason"):
            if data.get(key):
                return str(data[key]).splitlines()[0]
    return "no reason recorded"


def _scan(results_dir: Path) -> tuple[list[tuple[Path, dict[str, Any]]], list[FailedCell]]:
    if not results_dir.is_dir():
        raise SpecbenchError(f"results directory {results_dir} does not exist")
    raws = [(p, _read_raw(p)) for p in sorted(results_dir.rglob("summary.json"))]
    failures = [
        FailedCell(results_dir, p, _failure_reason(p))
        for p in sorted(results_dir.rglob("failure.json"))
        if not (p.parent / "summary.json").is_file()
    ]
    if not raws:
        if failures:
            raise SpecbenchError(
                f"{results_dir}: all {len(failures)} cells failed (see their failure.json)"
            )
        raise SpecbenchError(
            f"{results_dir}: no summary.json found; expected a specbench results directory "
            "(<label>/<dataset>/c<N>/r<N>/summary.json)"
        )
    return raws, failures


def load_cells(dirs: Sequence[Path]) -> tuple[list[LoadedCell], list[FailedCell]]:
    """Every cell of every directory, labels made unique across directories.

    A label present in several directories becomes `<dir name>/<label>` (directory names
    that collide get `#<position>` appended).
    """
    if not dirs:
        raise SpecbenchError("no results directory given")
    scanned = []
    for results_dir in map(Path, dirs):
        raws, failures = _scan(results_dir)
        scanned.append((results_dir, raws, failures, read_manifest(results_dir)))
    _check_versions([item for _, raws, _, _ in scanned for item in raws])
    validated = [
        (results_dir, [(p, _validate(p, raw)) for p, raw in raws], failures, manifest)
        for results_dir, raws, failures, manifest in scanned
    ]
    labels_per_dir = [{s.label for _, s in summaries} for _, summaries, _, _ in validated]
    seen_in = {
        label: sum(label in labels for labels in labels_per_dir)
        for labels in labels_per_dir
        for label in labels
    }
    cells: list[LoadedCell] = []
    failed: list[FailedCell] = []
    used_prefixes: set[str] = set()
    for index, (results_dir, summaries, failures, manifest) in enumerate(validated):
        prefix = results_dir.resolve().name or f"dir{index + 1}"
        if prefix in used_prefixes:
            prefix = f"{prefix}#{index + 1}"
        used_prefixes.add(prefix)
        baselines = manifest_baselines(manifest)
        for path, summary in summaries:
            label = summary.label
            shown = f"{prefix}/{label}" if seen_in[label] > 1 else label
            cells.append(LoadedCell(results_dir, shown, summary, path, label in baselines))
        failed.extend(failures)
    return cells, failed
