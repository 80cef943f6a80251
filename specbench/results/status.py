"""The state of a local results directory: its cells per server and workload, and its last run.

A cell is complete when its folder holds `summary.json`, failed when it holds only
`failure.json`, missing when it holds neither. Which cells there should be comes from the
suite the manifest records (what a rerun on the same `--output` measures); a directory
without one (`specbench bench`) shows the cells on disk, none of them missing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.store.layout import cell_summaries, failed_cells_below
from specbench.store.manifest import RunRecord, read_manifest
from specbench.suite.model import Suite

CellState = Literal["complete", "failed", "missing"]


@dataclass(frozen=True)
class GroupCells:
    """One server × workload: how many of its cells are complete, failed and missing."""

    server: str
    workload: str
    complete: int
    failed: int
    missing: int

    @property
    def total(self) -> int:
        return self.complete + self.failed + self.missing


@dataclass(frozen=True)
class LocalStatus:
    """Every server × workload of a results directory, in the suite's order, and its runs."""

    output: Path
    #: The suite the manifest records; None when it records none (the cells on disk count).
    suite_name: str | None
    groups: tuple[GroupCells, ...]
    last_run: RunRecord | None
    runs: int

    def count(self, state: CellState) -> int:
        return sum(getattr(group, state) for group in self.groups)

    @property
    def total(self) -> int:
        return sum(group.total for group in self.groups)


def cell_state(directory: Path) -> CellState:
    """complete (`summary.json`), failed (`failure.json` alone) or missing (neither)."""
    if store.is_complete(directory):
        return "complete"
    return "failed" if (directory / store.FAILURE).is_file() else "missing"


def _suite(raw: dict[str, Any] | None) -> Suite | None:
    if raw is None:
        return None
    try:
        return Suite.model_validate(raw)
    except ValidationError:
        return None  # written by another specbench version: count what is on disk


def _on_disk(output: Path) -> list[tuple[store.CellKey, CellState]]:
    complete = [path.parent for path in cell_summaries(output)]
    failed = [path.parent for path in failed_cells_below(output)]
    found: list[tuple[store.CellKey, CellState]] = []
    kinds: tuple[tuple[list[Path], CellState], ...] = ((complete, "complete"), (failed, "failed"))
    for directories, state in kinds:
        for directory in directories:
            try:
                found.append((store.cell_key_of(output, directory), state))
            except SpecbenchError:
                continue  # a failure.json outside the layout is no cell of this directory
    return sorted(found)


def collect_local_status(output: Path) -> LocalStatus:
    """Count the cells of `output` by server × workload and take its manifest's last run."""
    if not output.is_dir():
        raise SpecbenchError(f"{output}: no such results directory")
    manifest = read_manifest(output)
    if manifest is None:
        raise SpecbenchError(
            f"{output}: no {store.MANIFEST}; not a results directory written by specbench run "
            "or bench"
        )
    suite = _suite(manifest.suite)
    cells: list[tuple[store.CellKey, CellState]] = []
    if suite is not None:
        for cell in suite.expand():
            key = store.CellKey(
                cell.server, cell.workload, cell.concurrency, cell.repeat, launch=cell.launch
            )
            cells.append((key, cell_state(store.cell_path(output, key))))
    else:
        cells = _on_disk(output)
    counts: Counter[tuple[str, str, CellState]] = Counter(
        (key.server, key.workload, state) for key, state in cells
    )
    pairs = dict.fromkeys((key.server, key.workload) for key, _ in cells)
    groups = tuple(
        GroupCells(
            server,
            workload,
            counts[(server, workload, "complete")],
            counts[(server, workload, "failed")],
            counts[(server, workload, "missing")],
        )
        for server, workload in pairs
    )
    return LocalStatus(
        output=output,
        suite_name=suite.name if suite is not None else None,
        groups=groups,
        last_run=manifest.runs[-1] if manifest.runs else None,
        runs=len(manifest.runs),
    )


def describe_last_run(run: RunRecord | None, runs: int) -> list[str]:
    """`last run (N of M): COMMAND on HOST, START → END, STATUS: …` and its command line."""
    if run is None:
        return ["last run: none recorded"]
    end = run.finished_at or (
        "not yet (still running, or stopped before it could record its end)"
        if run.status == "running"
        else "not recorded"
    )
    lines = [
        f"last run ({runs} recorded): {run.command} on {run.host or 'unknown host'}, "
        f"started {run.started_at or 'unknown'}, ended {end}; {run.status}: "
        f"{len(run.cells_measured)} cells measured, {len(run.cells_failed)} failed"
        + (f", {len(run.cells_not_run)} not run" if run.cells_not_run else "")
    ]
    if run.argv:
        lines.append(f"  command line: {' '.join(run.argv)}")
    return lines


def summary_line(status: LocalStatus) -> str:
    """`2/4 cells complete, 0 failed, 2 missing` and what measures the rest."""
    complete, failed, missing = (status.count(s) for s in ("complete", "failed", "missing"))
    text = f"{complete}/{status.total} cells complete, {failed} failed, {missing} missing"
    if status.suite_name is None:
        return text + " (no suite recorded: only the cells on disk are counted)"
    if failed or missing:
        text += f"; `specbench run SUITE --output {status.output}` measures the {failed + missing}"
    return text
