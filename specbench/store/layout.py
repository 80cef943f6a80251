"""The results directory's layout, both ways: a cell's folder from its identity, and back.

DIR/manifest.json
DIR/<server>/<workload>/c<concurrency>/r<repeat>/          launch 0 (and results before launches)
DIR/<server>/<workload>/c<concurrency>/l<launch>/r<repeat>/ launch 1, 2, … of the server config
    summary.json        written last, atomically: its presence marks the cell complete
    requests.jsonl      one line per measured request, appended as each finishes
    metrics_before.prom raw /metrics scrape before the window
    metrics_after.prom  raw /metrics scrape after the window
    energy.jsonl        GPU energy readings: header, before, samples, after (docs/energy.md)
    window_samples.jsonl  requests running and waiting, polled through the window
    failure.json        only when the cell failed (a `FailureRecord`)

A cell's identity is its `CellKey`: server, workload key, concurrency, launch and repeat.
The same key, written `server/workload/cN/rM` (launch 0) or `server/workload/cN/lL/rM`
(launch L ≥ 1), names the cell in the manifest, in the gate and in progress output. Launch
0 has no launch part, so results measured before launches keep their folders and keys.
This module is the only one that builds or parses those paths; the key's text is built by
`common.naming.cell_key` (re-exported here), which the suite's cells use too, being a
stage below the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from specbench.common.errors import SpecbenchError
from specbench.common.naming import cell_key as cell_key  # re-exported
from specbench.common.naming import check_name as check_name  # re-exported
from specbench.common.naming import point_key as point_key  # re-exported
from specbench.common.naming import selection_key as selection_key  # re-exported

SUMMARY = "summary.json"
REQUESTS = "requests.jsonl"
METRICS_BEFORE = "metrics_before.prom"
METRICS_AFTER = "metrics_after.prom"
ENERGY = "energy.jsonl"
WINDOW_SAMPLES = "window_samples.jsonl"
FAILURE = "failure.json"
MANIFEST = "manifest.json"

if TYPE_CHECKING:
    from specbench.store.summary import CellSummary

_KEY = re.compile(
    r"^(?P<server>[^/]+)/(?P<workload>[^/]+)/c(?P<c>\d+)(?:/l(?P<l>[1-9]\d*))?/r(?P<r>\d+)$"
)


@dataclass(frozen=True, order=True, slots=True)
class CellKey:
    """One measured cell: server config × workload × concurrency × launch × repeat (from 0).

    `launch` is keyword-only (it came after the rest) and sorts before `repeat`."""

    server: str
    workload: str
    concurrency: int
    launch: int = field(default=0, kw_only=True)
    repeat: int

    def __str__(self) -> str:
        return cell_key(self.server, self.workload, self.concurrency, self.repeat, self.launch)

    @property
    def point(self) -> str:
        """The measured point, its repeats together: `server/workload/cN` (the gate's key)."""
        return point_key(self.server, self.workload, self.concurrency)

    @classmethod
    def parse(cls, text: str) -> CellKey:
        """`eagle3/speed-bench-qualitative/c48/r0` (or `…/c48/l2/r0`) → CellKey; anything
        else is one line."""
        match = _KEY.match(text)
        if not match:
            raise SpecbenchError(
                f"{text!r} is not a cell key (expected SERVER/WORKLOAD/cN/rM or "
                "SERVER/WORKLOAD/cN/lL/rM)"
            )
        return cls(
            match["server"],
            match["workload"],
            int(match["c"]),
            int(match["r"]),
            launch=int(match["l"] or 0),
        )


def summary_key(summary: CellSummary) -> CellKey:
    """The key of the cell a summary records (its label is the server's name)."""
    return CellKey(
        summary.label, summary.workload, summary.concurrency, summary.repeat, launch=summary.launch
    )


def cell_path(root: Path, key: CellKey) -> Path:
    """`root/<server>/<workload>/c<N>/r<M>`, or `…/c<N>/l<L>/r<M>` for launch L ≥ 1."""
    point = root / key.server / key.workload / f"c{key.concurrency}"
    if key.launch:
        point = point / f"l{key.launch}"
    return point / f"r{key.repeat}"


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
    """Every cell's `summary.json` at the layout's depths (`<server>/<workload>/cN/rM/` and
    `<server>/<workload>/cN/lL/rM/`), sorted."""
    found = [*root.glob(f"*/*/c*/r*/{SUMMARY}"), *root.glob(f"*/*/c*/l*/r*/{SUMMARY}")]
    return sorted(p for p in found if _KEY.match(p.parent.relative_to(root).as_posix()))


def summaries_below(root: Path) -> list[Path]:
    """Every `summary.json` at any depth under `root`, sorted: what a reader of hand-assembled
    or nested results directories loads."""
    return sorted(root.rglob(SUMMARY))


def failed_cells_below(root: Path) -> list[Path]:
    """Every `failure.json` at any depth under `root` whose folder holds no `summary.json`
    (a cell that failed and was not measured since), sorted."""
    return [path for path in sorted(root.rglob(FAILURE)) if not is_complete(path.parent)]
