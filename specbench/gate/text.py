"""Plain-text cells of a gate row, shared by the log table, the markdown summary and JUnit."""

from __future__ import annotations

from specbench.common.text import significant
from specbench.gate.compare import MetricComparison
from specbench.gate.snapshot import MetricStats

VERDICT_TEXT = {
    "pass": "pass",
    "improved": "improved",
    "within_noise": "pass (noise)",
    "regression": "REGRESSION",
    "new": "new",
    "missing": "MISSING",
}


def side_text(row: MetricComparison, side: str) -> str:
    """A side of a row: `stats_text`, or on launch-level rows `100 (median of 3 launches,
    σ 1.5, se_L 0.9)` (σ = 1.4826 × MAD of the launch values; se_L: one launch's own
    standard error, when stored)."""
    launches = row.launches
    if launches is None:
        return stats_text(row.baseline if side == "baseline" else row.current)
    values = launches.baseline if side == "baseline" else launches.current
    centre = launches.baseline_median if side == "baseline" else launches.current_median
    sigma = launches.baseline_sigma if side == "baseline" else launches.current_sigma
    own = launches.baseline_launch_se if side == "baseline" else launches.current_launch_se
    error = f", se_L {significant(own, 2)}" if own else ""
    return (
        f"{significant(centre)} (median of {len(values)} launches, σ {significant(sigma, 2)}"
        f"{error})"
    )


def stats_text(stats: MetricStats | None) -> str:
    """`2.816 ±0.012 (n=3, se 0.009)`: value, std over repeats, repeats, standard error."""
    if stats is None:
        return "–"
    spread = "" if stats.std is None or stats.n < 2 else f" ±{significant(stats.std, 2)}"
    error = "" if stats.se is None else f", se {significant(stats.se, 2)}"
    return f"{significant(stats.value)}{spread} (n={stats.n}{error})"


def _relative(row: MetricComparison, amount: float, signed: bool = True) -> str:
    """`amount` as a percentage of |baseline| (`+1.2%`), or as is when the baseline is 0."""
    reference = row.reference
    if reference:
        value = amount / abs(reference) * 100
        return f"{value:+.1f}%" if signed else f"{value:.1f}%"
    return f"{amount:+.3g}" if signed else f"{amount:.3g}"


def value_text(row: MetricComparison, side: str) -> str:
    """The value a side's rule compared, alone: `2.823` (the median launch value on
    launch-level rows), `–` when absent."""
    if row.launches is not None:
        launches = row.launches
        return significant(
            launches.baseline_median if side == "baseline" else launches.current_median
        )
    stats = row.baseline if side == "baseline" else row.current
    return significant(stats.value if stats is not None else None)


def brief_texts(row: MetricComparison) -> tuple[str, str, str, str]:
    """The terminal's short cells of a row: baseline, current, change, allowed
    (`2.823`, `2.429`, `-14.0%`, `-2%`)."""
    change = "–" if row.change is None else _relative(row, row.change)
    return (
        value_text(row, "baseline"),
        value_text(row, "current"),
        change,
        row.tolerance or "–",
    )


def change_text(row: MetricComparison) -> str:
    """`-3.3% [-5.9%, -0.7%]`: the change and, when tested, its interval at the row's level."""
    change = row.change
    if change is None:
        return "–"
    text = _relative(row, change)
    interval = row.interval
    if interval is not None:
        text += f" [{_relative(row, interval[0])}, {_relative(row, interval[1])}]"
    return text


def detectable_text(row: MetricComparison) -> str:
    """The smallest worsening the row's test catches with the rules' power: `3.1%`."""
    if row.detectable is None:
        return "–"
    return _relative(row, row.detectable, signed=False)


def tolerance_text(row: MetricComparison) -> str:
    """The rule and, when known, the noise band: `-2% (noise ±0.021)`."""
    if not row.tolerance:
        return "–"
    if row.noise is None:
        return row.tolerance
    return f"{row.tolerance} (noise ±{significant(row.noise, 2)})"


def decided_text(row: MetricComparison) -> str:
    """What decided, within its rule: `significance (p=0.003, level 0.0036)`, `noise
    band`, …; on launch-level rows `beyond noise ±4.2` or `within noise ±4.2`."""
    if row.launches is not None:
        if row.noise is None:
            return "material threshold alone"
        change = row.change or 0.0
        beyond = "beyond" if abs(change) > row.noise else "within"
        return f"{beyond} noise ±{significant(row.noise, 2)}"
    if row.decided_by == "significance" and row.p_value is not None and row.level is not None:
        return f"significance (p={row.p_value:.2g}, level {row.level:.2g})"
    return row.decided_by or "–"


def rule_text(row: MetricComparison) -> str:
    """The `decided by` column: the rule, then what decided within it:
    `launches (3 vs 3, median/MAD, material 2%): beyond noise ±0.42`,
    `within-launch: significance (p=0.003, level 0.0036)`."""
    if not row.rule:
        return "–"
    if row.decided_by == "ceiling":
        return row.rule
    return f"{row.rule}: {decided_text(row)}"


def row_texts(row: MetricComparison) -> list[str]:
    """The row's cells as the log table and the markdown summary show them, verdict aside:
    cell, metric, baseline, current, change, tolerance, detectable, decided by."""
    return [
        row.cell,
        row.metric,
        side_text(row, "baseline"),
        side_text(row, "current"),
        change_text(row),
        tolerance_text(row),
        detectable_text(row),
        rule_text(row),
    ]


def explanation(row: MetricComparison) -> str:
    """One sentence for JUnit messages and the markdown list of failures."""
    if row.verdict == "missing":
        return f"{row.cell} {row.metric}: missing ({row.note})"
    if row.verdict == "new":
        return f"{row.cell} {row.metric}: new, {row.note}"
    parts = [
        f"{row.cell} {row.metric}: {VERDICT_TEXT[row.verdict]}",
        f"baseline {side_text(row, 'baseline')}, current {side_text(row, 'current')}",
        f"change {change_text(row)}, tolerance {tolerance_text(row)}",
    ]
    if row.rule:
        parts.append(f"rule: {row.rule}")
    if row.decided_by:
        parts.append(f"decided by {decided_text(row)}")
    if row.detectable is not None:
        parts.append(f"detectable {detectable_text(row)}")
    if row.note:
        parts.append(row.note)
    return "; ".join(parts)
