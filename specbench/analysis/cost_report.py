"""The report's "Precision and cost" section: what each figure rests on, and what it cost.

Per cell (server, workload, concurrency, launch, repeat): conversations used of those
available, why the cell stopped, which window its throughput uses, and the 95% bootstrap
half-width of each targeted figure (relative).
Per directory: GPU-hours of every invocation, split into measuring, starting servers and
the rest (manifest `runs[].cost`); and the acceptance check of early-stopped cells
against the full-set cell (specbench.analysis.al_consistency).
"""

from __future__ import annotations

from pathlib import Path

from specbench.analysis.al_consistency import check_acceptance, describe_checks
from specbench.measure.precision import TARGETED_FIGURES
from specbench.metrics.declarations import targeted
from specbench.run.estimate import summaries_with_precision
from specbench.store.manifest import PrecisionPoint, read_manifest


def report_section(root: Path) -> str | None:
    """Markdown for one results directory; None when it predates precision records."""
    rows = []
    summaries = summaries_with_precision(root)
    summaries.sort(key=lambda s: (s.label, s.workload, s.concurrency, s.launch, s.repeat))
    for s in summaries:
        if s.precision is None:
            continue
        p = s.precision
        widths = [
            f"±{p.figures[f].relative_half_width:.1%}" if f in p.figures else "–"
            for f in TARGETED_FIGURES
        ]
        target = "–" if p.target is None else f"{p.target:.0%}"
        rows.append(
            f"| {s.label} | {s.workload} | {s.concurrency} | {s.launch} | {s.repeat} | "
            f"{p.conversations_used}/{p.conversations_available} | {target} | "
            f"{p.stopping_rule} | {s.throughput_window} | " + " | ".join(widths) + " |"
        )
    manifest = read_manifest(root)
    if not rows:
        launches = launch_lines(manifest.precision_launches if manifest else None)
        return "\n".join([f"## Precision and cost (`{root}`)", "", *launches]) if launches else None
    lines = [
        f"## Precision and cost (`{root}`)",
        "",
        "Each figure rests on the conversations shown; ± is the 95% bootstrap half-width "
        "(resampling conversations) relative to the figure. Tables use output tok/s/GPU of "
        "the window named (steady_state: while every slot was busy).",
        "",
        "| server | workload | c | launch | repeat | conversations | target | stopped | "
        "throughput window | "
        + " | ".join(f"± {figure.precision}" for figure in targeted())
        + " |",
        "|---|---|---|---|---|---|---|---|---|" + "---|" * len(TARGETED_FIGURES),
        *rows,
    ]
    launches = launch_lines(manifest.precision_launches if manifest else None)
    if launches:
        lines += ["", *launches]
    costs = [run.cost for run in (manifest.runs if manifest else []) if run.cost]
    if costs:
        total = sum(c.gpu_hours for c in costs)
        measuring = sum(c.gpu_hours_measuring for c in costs)
        starting = sum(c.gpu_hours_starting for c in costs)
        other = sum(c.gpu_hours_other for c in costs)
        lines += [
            "",
            f"GPU-hours spent ({len(costs)} invocation(s)): {total:.4f} total = "
            f"{measuring:.4f} measuring + {starting:.4f} starting servers + {other:.4f} "
            "other (warmup, scrapes, idle).",
        ]
    checks = describe_checks(check_acceptance(root))
    if checks:
        lines += ["", *checks]
    return "\n".join(lines)


def launch_lines(points: list[PrecisionPoint] | None) -> list[str]:
    """Markdown of each precision-targeted point's launches (the manifest's record of the
    last run): launches used of the cap, the launch-level half-widths, why it stopped; and
    a line naming each point that reached its cap without the precision. [] without one."""
    if not points:
        return []
    figures = targeted()
    lines = [
        "### Precision over launches",
        "",
        "A precision-targeted point measures at least 3 launches (fresh server starts), then "
        "one more at a time until every targeted figure's 95% half-width over launches "
        "(Student t over the launch values, relative to their mean) is within the target, "
        "or until `max_launches`. *cap reached*: the figures are not known to the target.",
        "",
        "| server | workload | c | launches | target | stopped | "
        + " | ".join(f"± {figure.precision}" for figure in figures)
        + " |",
        "|---|---|---|---|---|---|" + "---|" * len(figures),
    ]
    for point in sorted(points, key=lambda p: (p.server, p.workload, p.concurrency)):
        widths = [_width(point.half_widths.get(figure.name)) for figure in figures]
        stopped = point.stopped or "not finished (rerun to continue)"
        lines.append(
            f"| {point.server} | {point.workload} | {point.concurrency} | "
            f"{point.launches_used}/{point.max_launches} | {point.target:.2%} | {stopped} | "
            + " | ".join(widths)
            + " |"
        )
    capped = [p for p in points if p.stopped == "cap reached"]
    if capped:
        named = ", ".join(f"{p.server}/{p.workload}/c{p.concurrency}" for p in capped)
        lines += [
            "",
            f"**{len(capped)} of {len(points)} points: cap reached without the precision** "
            f"({named}): more launches (a higher `max_launches`) or a looser target.",
        ]
    titles = {figure.name: figure.precision or figure.name for figure in figures}
    regimes = [
        f"{p.server}/{p.workload}/c{p.concurrency} on "
        + ", ".join(titles.get(name, name) for name in p.regimes)
        for p in points
        if p.regimes
    ]
    if regimes:
        lines += [
            "",
            f"**Launches disagree beyond their intervals (a regime)**: {'; '.join(regimes)}. "
            "Two launches' within-launch 95% intervals do not overlap: each launch held its "
            "own timing regime. The ± above covers their spread, but the figure is a mix of "
            "regimes, not one value with noise around it.",
        ]
    return lines


def _width(value: float | None) -> str:
    return "–" if value is None else f"±{value:.1%}"
