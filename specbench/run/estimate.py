"""Cost before the run: wall time and GPU-hours of a plan, fitted on earlier results.

From each earlier cell of the same suite and model (any results directory, early-stopped
cells included) the estimator takes, per server × workload × concurrency:

- the steady-state conversation rate r = (n − min(c, n) + 1) / steady_state_duration_s
  (conversations finished while every slot was busy: the window ends at the first end
  after the last dispatch, which came at the (n − c)-th end; `summary.steady_state_*`),
- the drain tail = duration_s − steady_state_duration_s,
- the per-cell overhead (warmup, scrapes, prefix-cache reset) = the cell's wall time in
  the manifest's `cost.cell_wall_s` − duration_s,

and predicts a cell of N conversations as (N − min(c, N) + 1) / r + tail + overhead. A
concurrency not measured is interpolated (log r and the tail linear in log c between the
nearest measured concurrencies) or, outside them, extrapolated from the two nearest and
flagged. Server starts are the recorded `startup_s` of each server's provenance, paid
once per server start: per (server, launch) of the plan's cells, which hold the 3 launches
each precision-targeted point measures at least. Launches beyond those are decided as the
campaign runs (`run.launch_rounds`): the cap bounds them, priced as each point's planned
launches' mean plus a start per extra launch (`cap_bound`). A
precision-targeted cell is predicted at the conversations the source's matching cell used
when the source had the same target, else at the full workload (an upper bound, flagged).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.run.plan import Plan
from specbench.store.layout import cell_summaries, summary_key
from specbench.store.manifest import Manifest, read_manifest
from specbench.store.summary import CellSummary
from specbench.suite.model import Cell


@dataclass(frozen=True)
class _Point:
    concurrency: int
    rate: float  # conversations / s while every slot was busy
    tail_s: float
    overhead_s: float | None
    conversations: int
    target: float | None


@dataclass(frozen=True)
class CellEstimate:
    cell: Cell
    conversations: int
    wall_s: float
    gpu_hours: float
    how: str  # "measured", "interpolated", "extrapolated", + ", upper bound" when so


@dataclass(frozen=True)
class CapBound:
    """The worst case of precision over launches: every targeted point to its cap."""

    points: int
    #: The planned launches of a targeted point (at least 3) and the caps, as printed.
    minimum: int
    caps: tuple[int, ...]
    wall_s: float
    gpu_hours: float


@dataclass(frozen=True)
class Estimate:
    cells: list[CellEstimate]
    #: Server → seconds of one start (spawn → ready).
    starting_s: dict[str, float]
    #: Server → GPUs; None (an attached endpoint without --gpus) is counted as 1.
    gpus: dict[str, int | None]
    #: Server → starts the plan pays: one per launch with cells (1 when absent).
    starts: dict[str, int] = field(default_factory=dict)
    #: What precision-targeted points add at most beyond their planned launches, up to
    #: their cap (`max_launches`); None without such points.
    cap_bound: CapBound | None = None
    #: Cells to measure that no source prices (no earlier cell of their server and
    #: workload), each with why; the totals leave them out.
    unpriced: tuple[tuple[Cell, str], ...] = ()

    def server_wall_s(self, server: str) -> float:
        return self.starting_s.get(server, 0.0) * self.starts.get(server, 1) + sum(
            e.wall_s for e in self.cells if e.cell.server == server
        )

    @property
    def wall_s(self) -> float:
        return sum(self.server_wall_s(name) for name in self.gpus)

    @property
    def gpu_hours(self) -> float:
        return sum(
            self.server_wall_s(name) * (gpus or 1) / 3600 for name, gpus in self.gpus.items()
        )


def summaries_with_precision(root: Path) -> list[CellSummary]:
    """The cells of `root` that record steady-state and precision figures (older ones skipped:
    they lack both, so they can neither be fitted nor checked)."""
    found = []
    for path in cell_summaries(root):
        raw = store.read_json(path)
        if isinstance(raw, dict) and raw.get("precision") is not None:
            found.append(CellSummary.model_validate(raw))
    return found


def check_source(
    plan: Plan, root: Path, manifest: Manifest | None, flag: str = "--estimate-from"
) -> Manifest:
    """The source's manifest if it holds results of the plan's suite and model; else one line
    naming `flag`, the option that gave the source."""
    assert plan.suite is not None
    if manifest is None or manifest.suite is None:
        raise SpecbenchError(f"{flag} {root}: no manifest.json with a suite there")
    name = manifest.suite.get("name")
    if name != plan.suite.name:
        raise SpecbenchError(f"{flag} {root}: results of suite {name!r}, not {plan.suite.name!r}")
    theirs = {k: v.get("model") for k, v in (manifest.suite.get("servers") or {}).items()}
    ours = {k: c.model for k, c in plan.suite.servers.items()}
    for server, model in ours.items():
        if server in theirs and theirs[server] != model:
            raise SpecbenchError(
                f"{flag} {root}: server {server!r} ran model {theirs[server]!r}, not {model!r}"
            )
    return manifest


def estimate_plan(
    plan: Plan,
    sources: Sequence[Path],
    flag: str = "--estimate-from",
    cells: Sequence[Cell] | None = None,
) -> Estimate | None:
    """The cost of `cells` (default: every cell of the plan; a dry run passes those still to
    measure) fitted on `sources` (given by `flag`); None when they hold no usable cell.

    A cell whose server and workload no source measured is listed as unpriced, not guessed.
    """
    cells = plan.cells if cells is None else tuple(cells)
    points: dict[tuple[str, str], list[_Point]] = defaultdict(list)
    startups: dict[str, list[float]] = defaultdict(list)
    workload_size: dict[str, int] = {}
    for root in sources:
        manifest = check_source(plan, root, read_manifest(root), flag)
        walls: dict[str, float] = {}
        for run in manifest.runs:
            for server_cost in run.cost.servers if run.cost else []:
                walls.update(server_cost.cell_wall_s)
        for name, server_record in manifest.servers.items():
            startup = (server_record.provenance or {}).get("startup_s")
            if isinstance(startup, int | float):
                startups[name].append(float(startup))
        for key, record in manifest.workloads.items():
            if record.num_conversations:
                workload_size[key] = record.num_conversations
        for summary in summaries_with_precision(root):
            point = _point(summary, walls)
            if point is not None:
                points[(summary.label, summary.workload)].append(point)
    if not points and cells:
        return None
    estimates = []
    unpriced: list[tuple[Cell, str]] = []
    for cell in cells:
        workload = plan.workload(cell)
        known = sorted(points.get((cell.server, cell.workload), []), key=lambda p: p.concurrency)
        size = workload_size.get(cell.workload)
        if not known or size is None:
            what = "cell" if not known else "record of the workload's size"
            unpriced.append(
                (cell, f"no earlier {what} of server {cell.server} on workload {cell.workload}")
            )
            continue
        target = workload.precision_at(cell.concurrency)
        estimates.append(
            _cell_estimate(cell, known, size, target, plan.servers[cell.server].gpus or 1)
        )
    all_startups = [s for values in startups.values() for s in values]
    starting = {}
    for name, server in plan.servers.items():
        values = startups.get(name) or all_startups
        starting[name] = 0.0 if server.attached or not values else sum(values) / len(values)
    gpus = {n: s.gpus for n, s in plan.servers.items()}
    priced = [e.cell for e in estimates]
    bound = cap_bound(plan, estimates, starting, server_starts(plan))
    return Estimate(estimates, starting, gpus, server_starts(plan, priced), bound, tuple(unpriced))


def cap_bound(
    plan: Plan,
    estimates: Sequence[CellEstimate],
    starting_s: dict[str, float],
    starts: dict[str, int],
) -> CapBound | None:
    """Each precision-targeted point's launches beyond those the plan holds, up to its cap,
    priced as the mean of its launches in `estimates`; a server's extra starts, one per
    launch beyond `starts` (the whole plan's: launches already measured count as planned)."""
    suite = plan.suite
    if suite is None:
        return None
    planned_launches: dict[tuple[str, int, int], set[int]] = defaultdict(set)
    for cell in plan.cells:
        planned_launches[(cell.server, cell.workload_index, cell.concurrency)].add(cell.launch)
    points: dict[tuple[str, int, int], list[CellEstimate]] = defaultdict(list)
    for e in estimates:
        cell = e.cell
        if plan.servers[cell.server].attached:
            continue
        if plan.workload(cell).precision_at(cell.concurrency) is not None:
            points[(cell.server, cell.workload_index, cell.concurrency)].append(e)
    if not points:
        return None
    wall, hours = 0.0, 0.0
    most: dict[str, int] = defaultdict(int)
    minimums, caps = set(), set()
    for (server, index, concurrency), cells in points.items():
        planned = len(planned_launches[(server, index, concurrency)])
        priced = len({e.cell.launch for e in cells})
        cap = suite.launch_cap_of(index)
        minimums.add(suite.launches_at(index, concurrency))
        caps.add(cap)
        extra = max(0, cap - planned) * sum(e.wall_s for e in cells) / priced
        wall += extra
        hours += extra * (plan.servers[server].gpus or 1) / 3600
        most[server] = max(most[server], cap)
    for server, cap in most.items():
        extra_starts = max(0, cap - starts.get(server, 0)) * starting_s.get(server, 0.0)
        wall += extra_starts
        hours += extra_starts * (plan.servers[server].gpus or 1) / 3600
    return CapBound(len(points), min(minimums), tuple(sorted(caps)), wall, hours)


def server_starts(plan: Plan, cells: Sequence[Cell] | None = None) -> dict[str, int]:
    """Server → the starts its `cells` (default: the plan's) pay: one per launch (0 without
    cells)."""
    cells = plan.cells if cells is None else cells
    return {
        name: len({cell.launch for cell in cells if cell.server == name}) for name in plan.servers
    }


def _point(summary: CellSummary, walls: dict[str, float]) -> _Point | None:
    steady = summary.steady_state_duration_s
    n = summary.num_conversations
    if steady is None or steady <= 0 or n < 2:
        return None
    finished = n - min(summary.concurrency, n) + 1  # ends inside the steady-state window
    rate = finished / steady
    wall = walls.get(str(summary_key(summary)))
    target = summary.precision.target if summary.precision else None
    return _Point(
        concurrency=summary.concurrency,
        rate=rate,
        tail_s=max(0.0, summary.duration_s - steady),
        overhead_s=None if wall is None else max(0.0, wall - summary.duration_s),
        conversations=n,
        target=target,
    )


def _cell_estimate(
    cell: Cell, known: list[_Point], size: int, target: float | None, gpus: int
) -> CellEstimate:
    c = cell.concurrency
    exact = [p for p in known if p.concurrency == c]
    how = "measured" if exact else "interpolated"
    if exact:
        rate, tail = exact[0].rate, exact[0].tail_s
    elif len(known) == 1:
        rate, tail, how = known[0].rate, known[0].tail_s, "extrapolated"
    else:
        below = [p for p in known if p.concurrency < c]
        above = [p for p in known if p.concurrency > c]
        if below and above:
            a, b = below[-1], above[0]
        else:
            how = "extrapolated"
            a, b = (known[-2], known[-1]) if below else (known[0], known[1])
        x = (math.log(c) - math.log(a.concurrency)) / (
            math.log(b.concurrency) - math.log(a.concurrency)
        )
        rate = math.exp(math.log(a.rate) + x * (math.log(b.rate) - math.log(a.rate)))
        tail = max(0.0, a.tail_s + x * (b.tail_s - a.tail_s))
    conversations = size
    if target is not None:
        same = [p for p in exact if p.target == target]
        if same:
            conversations = same[0].conversations
        else:
            how += ", upper bound (all conversations)"
    overheads = [p.overhead_s for p in known if p.overhead_s is not None]
    overhead = sum(overheads) / len(overheads) if overheads else 0.0
    wall = (conversations - min(c, conversations) + 1) / rate + tail + overhead
    return CellEstimate(cell, conversations, wall, wall * gpus / 3600, how)


def describe_estimate(estimate: Estimate | None, source: str = "earlier results") -> str:
    """The estimate as lines: per cell, per server and in total; `source` names its data."""
    if estimate is None:
        return (
            "cost: cannot estimate: no earlier results of this suite and model (`specbench "
            "estimate SUITE --from DIR` fits them; `--pilot` measures a few conversations)"
        )
    if estimate.unpriced and not estimate.cells:
        reasons = dict.fromkeys(why for _, why in estimate.unpriced)
        return (
            f"cost: cannot estimate the {len(estimate.unpriced)} cells to measure from "
            f"{source}: {'; '.join(reasons)} (`specbench estimate SUITE --from DIR` fits "
            "earlier results of them; `--pilot` measures a few conversations)"
        )
    lines = [f"cost estimate (wall s, GPU-h; fitted on {source}):"]
    for e in estimate.cells:
        lines.append(
            f"  {e.cell.key}: {e.conversations} conversations, {e.wall_s:.1f} s, "
            f"{e.gpu_hours:.4f} GPU-h ({e.how})"
        )
    for cell, why in estimate.unpriced:
        lines.append(f"  {cell.key}: not priced ({why})")
    for name, gpus in estimate.gpus.items():
        if not any(e.cell.server == name for e in estimate.cells):
            continue  # nothing of it to measure, or nothing priced
        wall = estimate.server_wall_s(name)
        starts = estimate.starts.get(name, 1)
        times = f" × {starts} launches" if starts > 1 else ""
        lines.append(
            f"  server {name}: start {estimate.starting_s.get(name, 0):.1f} s{times}, total "
            f"{wall:.1f} s, {wall * (gpus or 1) / 3600:.4f} GPU-h "
            + (f"({gpus} GPU)" if gpus else "(GPU count unknown: 1 assumed; give --gpus)")
        )
    lines.append(f"  total: {estimate.wall_s:.1f} s, {estimate.gpu_hours:.4f} GPU-h")
    if not estimate.cells and not estimate.unpriced:
        lines.append("  nothing to measure: every selected cell is complete")
    elif estimate.unpriced:
        lines.append(
            f"  the total holds the {len(estimate.cells)} cells priced, not the "
            f"{len(estimate.unpriced)} not priced (`specbench estimate SUITE --from DIR` with "
            "earlier results of their servers, or `--pilot`, prices them)"
        )
    bound = estimate.cap_bound
    if bound is not None:
        caps = "/".join(map(str, bound.caps))
        lines.append(
            f"  precision over launches: priced at the {bound.minimum} launches each of the "
            f"{bound.points} precision-targeted points measures at least; more are added "
            f"until each figure is known to its target, up to the cap (max_launches = {caps}): "
            f"at most +{bound.wall_s:.1f} s, +{bound.gpu_hours:.4f} GPU-h (total at most "
            f"{estimate.wall_s + bound.wall_s:.1f} s, "
            f"{estimate.gpu_hours + bound.gpu_hours:.4f} GPU-h)"
        )
    return "\n".join(lines)
