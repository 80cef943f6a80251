"""Cells a suite asks for that a results directory lacks: never measured, or interrupted.

Failed cells have their `failure.json` and are reported as failed; a missing cell has
neither a summary nor a failure. Only a directory written by `run` (its manifest holds
the suite) knows which cells it should hold.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.store.manifest import read_manifest
from specbench.suite.model import Suite


def missing_cells(results_dir: Path) -> list[str]:
    """Cell keys (`server/workload/cN/rM`) of the manifest's suite with no result at all."""
    try:
        manifest = read_manifest(results_dir)
    except SpecbenchError:
        return []  # the readers say what is wrong with the manifest themselves
    if manifest is None or manifest.suite is None:
        return []
    try:
        suite = Suite.model_validate(manifest.suite)
    except ValidationError:
        return []  # written by another specbench version: nothing to compare against
    missing = []
    for cell in suite.expand():
        key = store.CellKey(
            cell.server, cell.workload, cell.concurrency, cell.repeat, launch=cell.launch
        )
        directory = store.cell_path(results_dir, key)
        if not store.is_complete(directory) and not (directory / store.FAILURE).exists():
            missing.append(cell.key)
    return missing


def describe_missing(missing: list[str], limit: int = 5) -> str | None:
    """One line naming the missing cells (the first `limit`), or None when none is."""
    if not missing:
        return None
    shown = ", ".join(missing[:limit]) + (
        f" and {len(missing) - limit} more" if len(missing) > limit else ""
    )
    return (
        f"{len(missing)} cell(s) of the suite have no results (never measured, or "
        f"interrupted): {shown}; `specbench run` on the same --output measures them"
    )
