"""The results directory's layout, both ways: a cell's folder from its identity, and back.

DIR/manifest.json
DIR/<server>/<workload>/c<concurrency>/r<repeat>/
    summary.json        written last, atomically: its presence marks the cell complete
    requests.jsonl      one line per measured request, appended as each finishes
    metrics_before.prom raw /metrics scrape before the window
    metrics_after.prom  raw /metrics scrape after the window
    failure.json        only when the cell failed (a `FailureRecord`)

A cell's identity is its `CellKey`: server, workload key, concurrency and repeat. The same
key, written `server/workload/cN/rM`, names the cell in the manifest, in the gate and in
progress output. This module is the only one that builds or parses those paths; the key's
text is built by `common.naming.cell_key` (re-exported here), which the suite's cells use
too, being a stage below the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.common.naming import cell_key as cell_key  # re-exported
from specbench.common.naming import check_name as check_name  # re-exported
from specbench.common.naming import point_key as point_key  # re-exported
from specbench.common.naming import selection_key as selection_key  # re-exported

SUMMARY = "summary.json"
REQUESTS = "requests.jsonl"
METRICS_BEFORE = "metrics_before.prom"
METRICS_AFTER = "metrics_after.prom"
FAILURE = "failure.json"
MANIFEST = "manifest.json"

_KEY = re.compile(r"^(?P<server>[^/]+)/(?P<workload>[^/]+)/c(?P<c>\d+)/r(?P<r>\d+)$")


@dataclass(frozen=True, order=True, slots=True)
class CellKey:
    """One measured cell: server config × workload × concurrency × repeat (from 0)."""

    server: str
    workload: str
    concurrency: int
    repeat: int

    def __str__(self) -> str:
        return cell_key(self.server, self.workload, self.concurrency, self.repeat)

    @property
    def point(self) -> str:
        """The measured point, its repeats together: `server/workload/cN` (the gate's key)."""
        return point_key(self.server, self.workload, self.concurrency)

    @classmethod
    def parse(cls, text: str) -> CellKey:
        """`eagle3/speed-bench-qualitative/c48/r0` → CellKey; anything else is one line."""
        match = _KEY.match(text)
        if not match:
            raise SpecbenchError(f"{text!r} is not a cell key (expected SERVER/WORKLOAD/cN/rM)")
        return cls(match["server"], match["workload"], int(match["c"]), int(match["r"]))


def cell_path(root: Path, key: CellKey) -> Path:
    """`root/<server>/<workload>/c<N>/r<M>`."""
    return root / key.server / key.workload / f"c{key.concurrency}" / f"r{key.repeat}"


def cell_key_of(root: Path, directory: Path) -> CellKey:
    """The inverse of `cell_path`: the identity of a cell folder under `root`."""
    try:
        relative = directory.relative_to(root).as_posix()
    except ValueError:
        raise SpecbenchError(f"{directory}: not inside the results directory {root}") from None
    return CellKey.parse(relative)


def is_complete(directory: Path) -> bool:
    return (directory / SUMMARY).is_file()


def cell_summaries(root: Path) -> list[Path]:
    """Every cell's `summary.json` at the layout's depth (`<server>/<workload>/cN/rM/`), sorted."""
    return sorted(root.glob(f"*/*/c*/r*/{SUMMARY}"))


def summaries_below(root: Path) -> list[Path]:
    """Every `summary.json` at any depth under `root`, sorted: what a reader of hand-assembled
    or nested results directories loads."""
    return sorted(root.rglob(SUMMARY))


def failed_cells_below(root: Path) -> list[Path]:
    """Every `failure.json` at any depth under `root` whose folder holds no `summary.json`
    (a cell that failed and was not measured since), sorted."""
    return [path for path in sorted(root.rglob(FAILURE)) if not is_complete(path.parent)]
