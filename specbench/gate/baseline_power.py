"""Is a baseline large enough for the rules it will be used with? (`baseline save` warns.)

For every figure × cell of the baseline that carries a standard error, assume a candidate
run of the same size (so SE_d = √2 × se) and the significance level the gate would use
(α / m, m = those figures × cells). The figure can resolve its tolerance when a regression
of 1.5 × the tolerance is caught with the rules' power (`stats.power`); when it
cannot, the warning names it and the conversations per cell that would let it (the error
shrinks as 1/√conversations).

A baseline of ≥ 3 launches is checked the same way: a candidate of fewer launches is judged
by this test (a candidate of ≥ 3 by the launch-level rule, which has no such power).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from specbench.gate.baseline import Baseline
from specbench.gate.compare import allowed_worsening, metrics_of, tested
from specbench.gate.rules import GateRules
from specbench.stats.power import detectable_worsening, difference_error_for
from specbench.stats.significance import bonferroni_level

#: A figure resolves its tolerance when a regression of this × the tolerance is caught.
RESOLUTION_MARGIN = 1.5


@dataclass(frozen=True, slots=True)
class FigurePower:
    """What one baseline figure can detect against a candidate of the same size."""

    cell: str
    metric: str
    allowed: float
    detectable: float
    conversations: int | None
    conversations_needed: int | None

    @property
    def resolves(self) -> bool:
        return self.detectable <= RESOLUTION_MARGIN * self.allowed


def baseline_power(baseline: Baseline, rules: GateRules) -> list[FigurePower]:
    """Every tested figure × cell of the baseline and the regression it can detect."""
    effective = rules.effective()
    rows = [
        (key, metric, rule, stats)
        for key, cell in baseline.cells.items()
        for metric, rule, stats, _ in metrics_of(effective, cell, cell)
        if stats is not None
        and tested(rule, stats, stats.model_copy(update={"launch_values": None}))
    ]
    level = bonferroni_level(rules.significance, len(rows))
    result = []
    for key, metric, rule, stats in rows:
        assert stats.se is not None
        allowed = allowed_worsening(rule, stats, key, metric)
        error = math.sqrt(2) * stats.se
        # A candidate of the same size: ν = 2 × the baseline's (Welch with equal sides).
        df = 2 * stats.df if stats.df else None
        detectable = detectable_worsening(allowed, error, level, rules.power, df)
        target = difference_error_for(
            allowed, level, power=rules.power, margin=RESOLUTION_MARGIN, df=df
        )
        needed = (
            math.ceil(stats.conversations * (error / target) ** 2)
            if stats.conversations and target > 0
            else None
        )
        result.append(FigurePower(key, metric, allowed, detectable, stats.conversations, needed))
    return result


def baseline_warnings(baseline: Baseline, rules: GateRules) -> list[str]:
    """One line per figure too noisy for its tolerance, worst first, then what to do."""
    if rules.significance == 0:
        return []
    figures = baseline_power(baseline, rules)
    coarse = sorted((f for f in figures if not f.resolves), key=lambda f: f.allowed / f.detectable)
    lines = []
    for figure in coarse[:10]:
        stats = baseline.cells[figure.cell]
        value = _value(stats.metrics.get(figure.metric)) or _category_value(stats, figure.metric)
        scale = abs(value) if value else None
        detectable = f"{figure.detectable / scale:.1%}" if scale else f"{figure.detectable:.3g}"
        tolerance = f"{figure.allowed / scale:.1%}" if scale else f"{figure.allowed:.3g}"
        needed = (
            f"; about {figure.conversations_needed} conversations per cell would "
            f"(now {figure.conversations})"
            if figure.conversations_needed
            else ""
        )
        lines.append(
            f"{figure.cell} {figure.metric}: detects {detectable} at {rules.power:.0%} power, "
            f"tolerance {tolerance}{needed}"
        )
    if coarse:
        lines.append(
            f"{len(coarse)} of {len(figures)} gated figures cannot resolve their tolerance "
            f"(a regression of {RESOLUTION_MARGIN:g} × the tolerance is caught less than "
            f"{rules.power:.0%} of the time against a run of this size): measure more "
            "conversations or widen those rules"
        )
    return lines


def _value(stats: object) -> float | None:
    return getattr(stats, "value", None)


def _category_value(cell: object, metric: str) -> float | None:
    categories = getattr(cell, "categories", {})
    name = metric.partition("[")[2].rstrip("]")
    found = categories.get(name, {}).get("acceptance_length")
    return _value(found)
