"""Reading results directories: every `summary.json` through the contract, and the manifest.

A results directory holds `manifest.json` and, per cell,
`<server>/<workload>/c<concurrency>/r<repeat>/summary.json` (a failed cell holds
`failure.json` instead; see `specbench.store.layout`). Schema-1 directories are read too:
their summaries get the workload key from their folder and the selection from the
manifest's suite (else from the folder name). Nothing here touches the network or pandas.
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
from specbench.common.naming import selection_key
from specbench.common.validation import describe_validation_error
from specbench.store.failure import read_failure
from specbench.store.layout import FAILURE, SUMMARY, failed_cells_below, summaries_below
from specbench.store.manifest import Manifest, read_manifest
from specbench.store.summary import CellSummary
from specbench.suite.model import MEASURED_FIELDS, WorkloadSpec

#: Summary schema versions this specbench reads (1 is converted on read).
READABLE_VERSIONS = (1, SCHEMA_VERSION)


@dataclass(frozen=True, slots=True)
class LoadedCell:
    """One `summary.json` with where it was found."""

    results_dir: Path
    label: str
    summary: CellSummary
    path: Path
    is_baseline: bool
    #: The workload's measured fields (`MEASURED_FIELDS`): cells equal here are comparable.
    identity: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class FailedCell:
    """One cell whose `failure.json` says why it has no summary."""

    results_dir: Path
    path: Path
    reason: str


def _read_raw(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:  # ValueError: bad JSON or not UTF-8 (binary)
        raise SpecbenchError(
            f"{path}: not readable JSON ({error}); move the cell's folder away to leave it out"
        ) from error
    if not isinstance(raw, dict) or "schema_version" not in raw:
        raise SpecbenchError(
            f"{path}: not a specbench summary (no schema_version); move the cell's folder away "
            "to leave it out"
        )
    return raw


def _check_version(path: Path, raw: dict[str, Any]) -> None:
    version = raw["schema_version"]
    if version not in READABLE_VERSIONS:
        raise SpecbenchError(
            f"{path}: schema_version {version!r} is not supported (this specbench reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}); use the specbench version that wrote it"
        )


def _validate(path: Path, raw: dict[str, Any]) -> CellSummary:
    try:
        return CellSummary.model_validate(raw)
    except ValidationError as error:
        detail = describe_validation_error(error, CellSummary, "", path).removeprefix(f"{path}: ")
        raise SpecbenchError(
            f"{path}: not a specbench summary ({detail}); move the cell's folder away to leave "
            "it out"
        ) from error


def _from_v1(raw: dict[str, Any], path: Path, manifest: Manifest | None) -> dict[str, Any]:
    """A schema-1 summary in the schema-2 shape: workload key and selection added."""
    folder = path.parent.parent.parent.name if len(path.parents) >= 3 else raw.get("dataset", "")
    workload = str(folder)
    categories, tiers = _v1_selection(workload, str(raw.get("dataset", "")), manifest)
    return {
        **raw,
        "schema_version": SCHEMA_VERSION,
        "workload": workload,
        "categories": categories,
        "entropy_tiers": tiers,
    }


def _v1_selection(
    workload: str, dataset: str, manifest: Manifest | None
) -> tuple[list[str] | None, list[str] | None]:
    """The selection of a schema-1 cell: its suite workload's, else parsed from its folder."""
    suite = manifest.suite if manifest else None
    for entry in (suite or {}).get("workloads") or []:
        categories, tiers = entry.get("categories"), entry.get("entropy_tiers")
        if selection_key(entry.get("dataset", ""), categories or (), tiers or ()) == workload:
            return categories, tiers
    base = selection_key(dataset)
    if not workload.startswith(base + "+"):
        return None, None
    names = workload[len(base) + 1 :].split("+")
    if dataset.startswith("speed-bench:throughput") or all(
        n.endswith("entropy") or n == "mixed" for n in names
    ):
        return None, names
    return names, None


def compared_workload_fields(
    summary: CellSummary, manifest: Manifest | None
) -> tuple[tuple[str, str], ...]:
    """The compared fields of a cell's workload (`MEASURED_FIELDS`: cells equal in them are
    comparable in tables) as (name, JSON) pairs: from the manifest, else from the summary."""
    record = manifest.workloads.get(summary.workload) if manifest else None
    spec: dict[str, Any] = dict(record.spec) if record else {}
    spec.setdefault("dataset", summary.dataset)
    spec.setdefault("max_tokens", summary.max_tokens)
    spec.setdefault("temperature", summary.temperature)
    spec.setdefault("api", summary.api)
    defaults = {
        name: field.get_default(call_default_factory=True)
        for name, field in WorkloadSpec.model_fields.items()
        if not field.is_required()
    }
    return tuple(
        (name, json.dumps(spec.get(name, defaults.get(name)), sort_keys=True))
        for name in MEASURED_FIELDS
    )


def _failure_reason(path: Path) -> str:
    return read_failure(path.parent).message.splitlines()[0] or "no reason recorded"


def _scan(results_dir: Path) -> tuple[list[tuple[Path, dict[str, Any]]], list[FailedCell]]:
    if not results_dir.is_dir():
        what = "is a file, not a directory" if results_dir.exists() else "does not exist"
        raise SpecbenchError(f"results directory {results_dir} {what}")
    raws = [(p, _read_raw(p)) for p in summaries_below(results_dir)]
    failures = [
        FailedCell(results_dir, p, _failure_reason(p)) for p in failed_cells_below(results_dir)
    ]
    if not raws:
        if failures:
            raise SpecbenchError(
                f"{results_dir}: all {len(failures)} cells failed (see their {FAILURE})"
            )
        raise SpecbenchError(
            f"{results_dir}: no {SUMMARY} found; expected a specbench results directory "
            f"(<label>/<dataset>/c<N>/r<N>/{SUMMARY})"
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
    for _, raws, _, _ in scanned:
        for path, raw in raws:
            _check_version(path, raw)
    validated = [
        (
            results_dir,
            [
                (
                    p,
                    _validate(
                        p,
                        raw if raw["schema_version"] != 1 else _from_v1(raw, p, manifest),
                    ),
                )
                for p, raw in raws
            ],
            failures,
            manifest,
        )
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
        baselines = manifest.baselines if manifest else set()
        for path, summary in summaries:
            label = summary.label
            shown = f"{prefix}/{label}" if seen_in[label] > 1 else label
            identity = compared_workload_fields(summary, manifest)
            cells.append(
                LoadedCell(results_dir, shown, summary, path, label in baselines, identity)
            )
        failed.extend(failures)
    return cells, failed
