"""Split a campaign into shards: one server config, or one server config × workload.

A shard id is the prefix its cells' keys share (`eagle3`, or `eagle3/w1` with
`--shard-by workload`), so it reads like the cell keys in the manifest. Each shard becomes
one Slurm job; a shard with no missing cell is not submitted again.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.common.naming import slug
from specbench.run.cells import cell_directory
from specbench.run.plan import RunOptions, select_cells
from specbench.suite import Cell, Suite

ShardBy = Literal["server", "workload"]


@dataclass(frozen=True)
class Shard:
    """The cells one job measures: a server's, or a server's on one workload."""

    id: str
    server: str
    workload_index: int | None
    cells: tuple[Cell, ...]

    @property
    def file_name(self) -> str:
        return shard_file_name(self.id)

    def missing(self, suite: Suite, output: Path) -> list[Cell]:
        """Cells of the shard without a summary.json yet."""
        return [c for c in self.cells if not store.is_complete(cell_directory(output, c))]


def shard_file_name(shard: str) -> str:
    """A shard id as a file name stem: `eagle3/w1` → `eagle3-w1`."""
    return slug(shard.replace("/", "-"))


def shard_id(server: str, workload_index: int | None) -> str:
    return server if workload_index is None else f"{server}/w{workload_index}"


def plan_shards(
    suite: Suite,
    shard_by: ShardBy = "server",
    servers: Sequence[str] = (),
    patterns: Sequence[str] = (),
    workloads: Sequence[str] = (),
) -> list[Shard]:
    """The shards of the suite in matrix order: `servers`, `workloads` (keys), glob `patterns`."""
    selection = RunOptions(output=Path("."), servers=tuple(servers), workloads=tuple(workloads))
    cells = select_cells(suite, selection)
    grouped: dict[str, list[Cell]] = {}
    for cell in cells:
        index = cell.workload_index if shard_by == "workload" else None
        grouped.setdefault(shard_id(cell.server, index), []).append(cell)
    shards = [
        Shard(
            id=key,
            server=group[0].server,
            workload_index=group[0].workload_index if shard_by == "workload" else None,
            cells=tuple(group),
        )
        for key, group in grouped.items()
    ]
    if not patterns:
        return shards
    chosen = [s for s in shards if any(fnmatch.fnmatchcase(s.id, p) for p in patterns)]
    if not chosen:
        have = ", ".join(s.id for s in shards)
        raise SpecbenchError(f"--shard {', '.join(patterns)}: matches no shard (have {have})")
    return chosen
