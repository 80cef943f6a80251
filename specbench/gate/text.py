"""Plain-text cells of a gate row, shared by the log table, the markdown summary and JUnit."""

from __future__ import annotations

from specbench.common.text import significant
from specbench.gate.compare import Comparison
from specbench.gate.snapshot import MetricStats

VERDICT_TEXT = {
    "pass": "pass",
    "improved": "improved",
    "within_noise": "pass (noise)",
    "regression": "REGRESSION",
    "new": "new",
    "missing": "MISSING",
}


def stats_text(stats: MetricStats | None) -> str:
    """`2.816 ±0.012 (n=3)`: the value, its std over repeats and the repeat count."""
    if stats is None:
        return "–"
    if stats.std is None or stats.n < 2:
        return f"{significant(stats.value)} (n={stats.n})"
    return f"{significant(stats.value)} ±{significant(stats.std, 2)} (n={stats.n})"


def change_text(row: Comparison) -> str:
    """`-13.8%`, or the absolute change when the baseline is 0."""
    relative = row.relative_change
    if relative is not None:
        return f"{relative * 100:+.1f}%"
    change = row.change
    return "–" if change is None else f"{change:+g}"


def tolerance_text(row: Comparison) -> str:
    """The rule and, when known, the noise band: `-2% (noise ±0.021)`."""
    if not row.tolerance:
        return "–"
    if row.noise is None:
        return row.tolerance
    return f"{row.tolerance} (noise ±{significant(row.noise, 2)})"


def explanation(row: Comparison) -> str:
    """One sentence for JUnit messages and the markdown list of failures."""
    if row.verdict == "missing":
        return f"{row.cell} {row.metric}: missing ({row.note})"
    if row.verdict == "new":
        return f"{row.cell} {row.metric}: new, {row.note}"
    parts = [
        f"{row.cell} {row.metric}: {VERDICT_TEXT[row.verdict]}",
        f"baseline {stats_text(row.baseline)}, current {stats_text(row.current)}",
        f"change {change_text(row)}, tolerance {tolerance_text(row)}",
    ]
    if row.note:
        parts.append(row.note)
    return "; ".join(parts)
