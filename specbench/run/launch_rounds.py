"""Precision over launches: which points need another launch, read from the results on disk.

A precision-targeted point (server config × workload × concurrency, `precision_at` set, a
server the run starts) measures at least `MIN_PRECISION_LAUNCHES` launches (the suite plans
them, `Suite.launches_at`), then one more at a time until every targeted figure
(`metrics.declarations.targeted`) is known to the workload's precision at the launch level,
or the cap (`max_launches`) is reached:

- a launch's value of a figure is the mean over its repeats' summaries;
- the point's interval is Student t over its launch values (`stats.launches`, kind
  "launches"); its relative half-width is half-width / |mean of the launch values|;
- a launch is *used* once each of its repeats holds a summary or a failure; the next launch
  is the first one not used (so a rerun after Ctrl-C completes the launch it stopped in);
- precision reached: at least the planned launches are used and every targeted figure with
  a value has a relative half-width at most the target; cap reached: the cap's launches are
  used without that; else another launch.

A point whose launches disagree beyond their own intervals (two launches whose
within-launch 95% intervals of a figure do not overlap: a timing regime the launch held for
its whole run) is flagged with that figure (`regimes`), AIPerf's distribution check: the
launch-level interval covers the spread, but the figure is a mix of regimes, not one value
with noise around it.

Within each launch a cell keeps its own early stopping (the block bootstrap over
conversations, `measure.precision`), which sizes the launch's cells.

Pure: a decision is a function of the plan and the files in the results directory, so a
rerun recomputes the same one and continues where the last stopped.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from specbench import store
from specbench.metrics.declarations import Figure, figure_of, targeted
from specbench.run.cells import cell_directory
from specbench.run.plan import Plan
from specbench.stats.launches import launch_interval
from specbench.stats.significance import Z95
from specbench.store.manifest import PrecisionPoint
from specbench.store.summary import CellSummary
from specbench.suite.model import Cell

StopReason = Literal["precision reached", "cap reached"]
PRECISION_REACHED: StopReason = "precision reached"
CAP_REACHED: StopReason = "cap reached"


@dataclass(frozen=True, slots=True)
class Point:
    """A precision-targeted point of the plan."""

    server: str
    workload_index: int
    workload: str
    concurrency: int

    @property
    def key(self) -> str:
        """`server/workload/cN`, as the report and the run's last line name it."""
        return f"{self.server}/{self.workload}/c{self.concurrency}"


@dataclass(frozen=True, slots=True)
class PointDecision:
    """What a point's launches so far say: stop (and why) or measure `next_launch`."""

    point: Point
    target: float
    cap: int
    #: Launches planned before any decision (at least `MIN_PRECISION_LAUNCHES`).
    minimum: int
    #: Launches whose every repeat holds a summary or a failure.
    launches_used: int
    #: Targeted figure → relative launch-level half-width; None: fewer than two launch
    #: values, or no value (a figure the cells do not have).
    half_widths: dict[str, float | None] = field(default_factory=dict)
    reason: StopReason | None = None
    #: Targeted figures on which two launches' within-launch 95% intervals do not overlap.
    regimes: tuple[str, ...] = ()

    @property
    def next_launch(self) -> int | None:
        """The launch to measure next; None once stopped."""
        return None if self.reason is not None else self.launches_used

    def record(self) -> PrecisionPoint:
        """The manifest's record of this point."""
        return PrecisionPoint(
            server=self.point.server,
            workload=self.point.workload,
            concurrency=self.point.concurrency,
            target=self.target,
            launches_used=self.launches_used,
            max_launches=self.cap,
            half_widths=dict(self.half_widths),
            stopped=self.reason,
            regimes=list(self.regimes),
        )

    @property
    def worst(self) -> tuple[str, float] | None:
        """The widest targeted figure and its relative half-width, if any has one."""
        known = [(name, value) for name, value in self.half_widths.items() if value is not None]
        return max(known, key=lambda item: item[1]) if known else None


def targeted_points(plan: Plan) -> list[Point]:
    """The plan's precision-targeted points, in plan order; none without a suite (`bench`)
    or on an attached server (it cannot be started again)."""
    if plan.suite is None:
        return []
    points: dict[Point, None] = {}
    for cell in plan.cells:
        if plan.servers[cell.server].attached:
            continue
        if plan.workload(cell).precision_at(cell.concurrency) is None:
            continue
        points[Point(cell.server, cell.workload_index, cell.workload, cell.concurrency)] = None
    return list(points)


def figure_value(summary: CellSummary, figure: Figure) -> float | None:
    """A targeted figure's value in one summary (the per-server one where the per-GPU is
    unknown; a derived figure from its source); None where the summary has none."""
    value: object
    if figure.statistic is not None:
        distribution, statistic = figure.statistic
        value = getattr(getattr(summary, distribution, None), statistic, None)
    elif figure.derived is not None:
        source = figure_of(figure.derived.source)
        base = figure_value(summary, source) if source is not None else None
        value = None if base is None else figure.derived.formula(base)
    else:
        value = getattr(summary, figure.name, None)
        if value is None and figure.per_server is not None:
            value = getattr(summary, figure.per_server, None)
    if not isinstance(value, (int, float)) or math.isnan(float(value)):
        return None
    return float(value)


def figure_error(summary: CellSummary, figure: Figure) -> float | None:
    """One cell's within-launch standard error of a targeted figure: its stated precision
    interval's ((ci_high − ci_low) / 2 / z(0.975), the wider of the two bootstraps), else
    its stored bootstrap error (a derived figure's carried from its source's); None."""
    names = [figure.name] + ([figure.per_server] if figure.per_server else [])
    stated = summary.precision.figures if summary.precision is not None else {}
    for name in names:
        if name in stated:
            return (stated[name].ci_high - stated[name].ci_low) / 2.0 / Z95
    stored = summary.standard_errors.figures if summary.standard_errors is not None else {}
    for name in names:
        if name in stored:
            return stored[name]
    derived = figure.derived
    source = figure_of(derived.source) if derived is not None else None
    if derived is None or source is None or derived.source not in stored:
        return None
    base = figure_value(summary, source)
    return None if base is None else derived.standard_error(base, stored[derived.source])


def launch_error(summaries: Sequence[CellSummary], figure: Figure) -> float | None:
    """A launch's within-launch standard error of its mean over repeats: √Σse_r² / n;
    None if a repeat has none."""
    errors = [figure_error(summary, figure) for summary in summaries]
    if not errors or any(error is None for error in errors):
        return None
    return math.sqrt(sum(e * e for e in errors if e is not None)) / len(errors)


def disagree(values: Sequence[float], errors: Sequence[float | None]) -> bool:
    """Whether two launches' 95% intervals (value ± z(0.975) · se) do not overlap."""
    known = [(v, e) for v, e in zip(values, errors, strict=True) if e is not None]
    return any(
        abs(a - b) > Z95 * (ea + eb)
        for index, (a, ea) in enumerate(known)
        for b, eb in known[index + 1 :]
    )


def relative_half_width(values: Sequence[float]) -> float | None:
    """The Student t 95% half-width over launch values, relative to their mean; None below
    two values; infinite at a zero mean."""
    if len(values) < 2:
        return None
    interval = launch_interval(list(values), [None] * len(values))
    half = interval.half_width
    assert half is not None, "two or more launch values always have a standard error"
    return half / abs(interval.value) if interval.value else math.inf


def decide(
    plan: Plan, output: Path, *, only: Collection[Cell] | None = None
) -> list[PointDecision]:
    """Every targeted point's decision from the summaries and failures under `output`;
    with `only` (a `--force` run: the cells it measured), a launch counts only once each of
    its cells is among them, so launches an earlier run left are measured again."""
    suite = plan.suite
    decisions = []
    for point in targeted_points(plan):
        assert suite is not None
        workload = suite.workloads[point.workload_index]
        target = workload.precision_at(point.concurrency)
        assert target is not None
        cap = suite.launch_cap_of(point.workload_index)
        minimum = suite.launches_at(point.workload_index, point.concurrency)
        launch_summaries = _launches(plan, output, point, only)
        used = len(launch_summaries)
        values: dict[str, list[float]] = {figure.name: [] for figure in targeted()}
        errors: dict[str, list[float | None]] = {figure.name: [] for figure in targeted()}
        for summaries in launch_summaries:
            for figure in targeted():
                found = [v for s in summaries if (v := figure_value(s, figure)) is not None]
                if found:
                    values[figure.name].append(sum(found) / len(found))
                    errors[figure.name].append(launch_error(summaries, figure))
        regimes = tuple(name for name in values if disagree(values[name], errors[name]))
        widths = {name: relative_half_width(found) for name, found in values.items()}
        judged = [width for name, width in widths.items() if values[name]]
        reached = (
            used >= minimum
            and bool(judged)
            and all(width is not None and width <= target for width in judged)
        )
        reason = PRECISION_REACHED if reached else (CAP_REACHED if used >= cap else None)
        decisions.append(PointDecision(point, target, cap, minimum, used, widths, reason, regimes))
    return decisions


def _launches(
    plan: Plan, output: Path, point: Point, only: Collection[Cell] | None
) -> list[list[CellSummary]]:
    """Each used launch's summaries: launches are used in order, up to the first whose
    repeats are not all measured or failed (past the cap where a lowered cap left more),
    or, with `only`, not all among those cells."""
    suite = plan.suite
    assert suite is not None
    used: list[list[CellSummary]] = []
    while True:
        cells = suite.point_cells(point.server, point.workload_index, point.concurrency, len(used))
        if only is not None and not all(cell in only for cell in cells):
            return used
        folders = [cell_directory(output, cell) for cell in cells]
        if not all((f / store.SUMMARY).is_file() or (f / store.FAILURE).is_file() for f in folders):
            return used
        used.append([store.read_summary(f) for f in folders if store.is_complete(f)])


def next_cells(plan: Plan, decisions: Sequence[PointDecision]) -> list[Cell]:
    """The cells of each unstopped point's next launch, launch-major, servers in the suite's
    launch order, then workload and concurrency as in the plan: consecutive cells of one
    server and launch share one fresh server start."""
    suite = plan.suite
    pending = [d for d in decisions if d.next_launch is not None]
    if suite is None or not pending:
        return []
    last = max(d.next_launch or 0 for d in pending)
    orders = suite.launch_orders(last + 1)
    cells: list[Cell] = []
    for launch in sorted({d.next_launch for d in pending if d.next_launch is not None}):
        for server in orders[launch]:
            for decision in pending:
                point = decision.point
                if decision.next_launch == launch and point.server == server:
                    cells.extend(
                        suite.point_cells(server, point.workload_index, point.concurrency, launch)
                    )
    return cells


def describe(decisions: Sequence[PointDecision]) -> str | None:
    """One line for the end of a run: how many points reached their precision (in how many
    launches), and each that stopped with its cap reached without it; None without targeted
    points."""
    if not decisions:
        return None
    reached = [d for d in decisions if d.reason == PRECISION_REACHED]
    capped = [d for d in decisions if d.reason == CAP_REACHED]
    unfinished = [d for d in decisions if d.reason is None]
    targets = "/".join(_percent(t) for t in sorted({d.target for d in decisions}))
    line = f"precision {targets} over launches: {len(reached)} of {len(decisions)} points "
    line += PRECISION_REACHED
    if reached:
        counts = sorted({d.launches_used for d in reached})
        span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
        line += f" in {span} launches"
    if capped:
        named = "; ".join(_capped(d) for d in capped)
        line += f"; {len(capped)} {CAP_REACHED} without it ({named})"
    if unfinished:
        line += f"; {len(unfinished)} not finished (rerun to continue)"
    return line


def _percent(target: float) -> str:
    """`2%` for a whole percentage, else the fraction as given (`0.0001`, `0.025`)."""
    whole = abs(target * 100 - round(target * 100)) < 1e-9
    return f"{round(target * 100)}%" if whole else f"{target:g}"


def _capped(decision: PointDecision) -> str:
    worst = decision.worst
    width = f"{worst[0]} ±{worst[1]:.1%}" if worst is not None else "no interval"
    return f"{decision.point.key}: {decision.launches_used} launches, {width}"
