"""The verdict on one metric of one cell: launch-level values, or tolerance AND significance.

`judge` decides one row (see `gate.compare` for the rules, `gate.launches` for the
launch-level rule and `stats.significance` for the test); `MetricComparison` is the row,
with which rule it used, the interval of the change at its level, what decided it and the
smallest regression its test detects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from specbench.common.errors import SpecbenchError
from specbench.gate.launches import LaunchComparison, launch_comparison, within_launch_rule
from specbench.gate.rules import DEFAULT_MATERIAL, MetricRule
from specbench.gate.snapshot import MetricStats
from specbench.stats.power import detectable_worsening
from specbench.stats.significance import critical_value, welch_df, worsening_p_value
from specbench.stats.standard_errors import difference_error

Verdict = Literal["pass", "improved", "within_noise", "regression", "new", "missing"]
#: What decided a row: the launch-level rule (medians and MADs of launch values), the
#: significance test, the older repeat noise band, the tolerance alone, or a ceiling
#: (`max` rules).
DecidedBy = Literal["launches", "significance", "noise band", "tolerance", "ceiling", ""]
PASSING: frozenset[str] = frozenset({"pass", "improved", "within_noise", "new"})
#: Shown instead of a metric name on the single row of a new cell.
ALL_METRICS = "(all)"
#: Row of a cell some of whose repeats failed (failure.json beside other repeats' summaries).
FAILED_REPEATS = "(repeats)"


@dataclass(frozen=True, slots=True)
class MetricComparison:
    """The verdict on one metric of one cell."""

    cell: str
    metric: str
    verdict: Verdict
    direction: str
    tolerance: str
    baseline: MetricStats | None = None
    current: MetricStats | None = None
    allowed: float | None = None
    noise: float | None = None
    note: str = ""
    cell_missing: bool = False
    decided_by: DecidedBy = ""
    #: √(se_b² + se_c²): standard error of the change (significance rows only).
    difference_se: float | None = None
    #: One-sided p of "no worsening", the level it was tested at (α / m), and the
    #: Welch degrees of freedom of the t test (None: normal).
    p_value: float | None = None
    level: float | None = None
    df: float | None = None
    #: Smallest true worsening (metric units) caught with the rules' power.
    detectable: float | None = None
    #: Launch values compared (launch-level rows only: ≥ 3 launches on both sides).
    launches: LaunchComparison | None = None

    @property
    def rule(self) -> str:
        """Which rule judged the row: `launches (3 vs 3, median/MAD, material 2%)`,
        `within-launch` (with why, when launches were too few), a ceiling (the worst repeat
        of any launch, whatever the baseline), or "" (not judged)."""
        if self.launches is not None:
            return self.launches.describe()
        if not self.decided_by:
            return ""
        if self.decided_by == "ceiling":
            return "ceiling (worst repeat of any launch)"
        return within_launch_rule(self.baseline, self.current)

    @property
    def reference(self) -> float | None:
        """The baseline's value the change is relative to: its median launch value on
        launch-level rows, else its value over repeats."""
        if self.launches is not None:
            return self.launches.baseline_median
        return self.baseline.value if self.baseline is not None else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """current − baseline ± t_{1−level, ν} × SE: the change's interval at the row's level.

        A worsening is significant exactly when this interval lies wholly on the worse side.
        """
        change = self.change
        if change is None or self.difference_se is None or self.level is None:
            return None
        half = critical_value(self.level, self.df) * self.difference_se
        return change - half, change + half

    @property
    def change(self) -> float | None:
        """current − baseline, in the metric's units (of the medians on launch-level rows)."""
        if self.launches is not None:
            return self.launches.current_median - self.launches.baseline_median
        if self.baseline is None or self.current is None:
            return None
        return self.current.value - self.baseline.value

    @property
    def relative_change(self) -> float | None:
        """(current − baseline) / |baseline|; None when the baseline is 0 or absent."""
        change, reference = self.change, self.reference
        if change is None or not reference:
            return None
        return change / abs(reference)


def noise_band(
    baseline: MetricStats, current: MetricStats, sigmas: float
) -> tuple[float | None, str]:
    """`sigmas` × the standard error of the difference of the means, and how it was found."""
    b_std = baseline.std if baseline.n >= 2 else None
    c_std = current.std if current.n >= 2 else None
    if b_std is not None and c_std is not None:
        return sigmas * math.sqrt(b_std**2 / baseline.n + c_std**2 / current.n), ""
    if b_std is not None or c_std is not None:
        std = b_std if b_std is not None else c_std
        assert std is not None
        side = "baseline" if b_std is not None else "current"
        return (
            sigmas * std * math.sqrt(1 / baseline.n + 1 / current.n),
            f"noise from the {side} spread only",
        )
    return None, "n=1: tolerance only (no spread to estimate noise)"


def allowed_worsening(rule: MetricRule, baseline: MetricStats, cell: str, metric: str) -> float:
    if rule.relative is not None:
        return rule.relative * abs(baseline.value)
    if rule.absolute is not None:
        return rule.absolute
    assert rule.spread is not None
    if baseline.std is None:
        raise SpecbenchError(
            f"rule {metric}: tolerance 'spread' needs a baseline with >= 2 repeats, but cell "
            f"{cell} has {baseline.n}; use relative or absolute, or save a baseline with repeats"
        )
    return rule.spread * baseline.std


def _fallback_reason(baseline: MetricStats, current: MetricStats, level: float | None) -> str:
    """Why a row is not judged by the significance test."""
    for side, stats in (("baseline", baseline), ("results", current)):
        if stats.se is None and stats.se_note:
            return f"{side}: {stats.se_note}"
    if baseline.se is None:
        return "baseline without stored errors (older file): older rule"
    if current.se is None:
        return "results without stored errors (older results): older rule"
    return "significance test off"


def judge(
    rule: MetricRule,
    baseline: MetricStats | None,
    current: MetricStats,
    *,
    cell: str,
    metric: str,
    sigmas: float,
    level: float | None = None,
    power: float = 0.8,
    launch_sigmas: float = 2.0,
) -> MetricComparison:
    """The verdict on one metric present in the results.

    With ≥ 3 launch values on both sides, the launch-level rule (`gate.launches`,
    `launch_sigmas` = its k). Else `level`: the per-figure significance level (α / m);
    None: the significance test is off and the older noise band decides.
    """
    common: dict[str, Any] = {
        "cell": cell,
        "metric": metric,
        "direction": rule.direction,
        "tolerance": rule.describe(),
        "baseline": baseline,
        "current": current,
    }
    if rule.max is not None:
        worst = current.max
        verdict: Verdict = "regression" if worst > rule.max else "pass"
        note = f"worst repeat {worst:g}" if current.n > 1 else ""
        return MetricComparison(
            **common, verdict=verdict, allowed=rule.max, note=note, decided_by="ceiling"
        )
    assert baseline is not None
    sign = 1.0 if rule.direction == "higher" else -1.0
    material = rule.material if rule.material is not None else DEFAULT_MATERIAL
    launches = launch_comparison(
        baseline, current, launch_sigmas if rule.noise else 0, material, level
    )
    if launches is not None:
        return judge_launches(launches, sign, common)
    worsening = sign * (baseline.value - current.value)
    allowed = allowed_worsening(rule, baseline, cell, metric)
    if rule.noise and tested(rule, baseline, current) and level is not None:
        (se_b, df_b), (se_c, df_c) = side_errors(baseline, current)
        error = difference_error(se_b, se_c)
        df = welch_df(se_b, df_b, se_c, df_c)
        p_value = worsening_p_value(worsening, error, df)
        return MetricComparison(
            **common,
            verdict=_verdict(worsening, allowed, p_value <= level, 1 - p_value <= level),
            allowed=allowed,
            decided_by="significance",
            difference_se=error,
            p_value=p_value,
            level=level,
            df=df,
            detectable=detectable_worsening(allowed, error, level, power, df),
        )
    if not rule.noise or sigmas == 0:
        noise, note = None, "noise check off"
    else:
        noise, note = noise_band(baseline, current, sigmas)
        note = "; ".join(filter(None, [_fallback_reason(baseline, current, level), note]))
    beyond_noise = noise is None or abs(worsening) > noise
    return MetricComparison(
        **common,
        verdict=_verdict(worsening, allowed, beyond_noise, beyond_noise),
        allowed=allowed,
        noise=noise,
        note=note,
        decided_by="noise band" if noise is not None else "tolerance",
    )


def judge_launches(
    launches: LaunchComparison, sign: float, common: dict[str, Any]
) -> MetricComparison:
    """The launch-level verdict: the medians' worsening against the material threshold and
    the noise k × √(σ_b² + σ_c²) (`gate.launches`)."""
    worsening = sign * (launches.baseline_median - launches.current_median)
    noise = launches.noise
    sign_text = "-" if sign > 0 else "+"
    return MetricComparison(
        **{**common, "tolerance": f"{sign_text}{launches.material * 100:g}% material"},
        verdict=_verdict(worsening, launches.threshold, worsening > noise, -worsening > noise),
        allowed=launches.threshold,
        noise=noise if launches.sigmas > 0 else None,
        decided_by="launches",
        launches=launches,
    )


def _verdict(
    worsening: float, allowed: float, worse_is_real: bool, better_is_real: bool
) -> Verdict:
    """regression (worse beyond the tolerance, and really), within_noise (worse beyond it,
    not really), improved (better beyond it, and really), else pass."""
    if worsening > allowed:
        return "regression" if worse_is_real else "within_noise"
    if -worsening > allowed and better_is_real:
        return "improved"
    return "pass"


def side_errors(
    baseline: MetricStats, current: MetricStats
) -> tuple[tuple[float, float | None], tuple[float, float | None]]:
    """(se, degrees of freedom) of each side; a side borrows the other's per-run spread.

    The std over repeats is the run-to-run noise of one run (what a within-run bootstrap
    cannot see: another machine, batch nondeterminism); a single-repeat current run has
    at least that noise, so its error is max(se, std / √n) with the other side's std
    (and that std's degrees of freedom, repeats − 1, when it decides).
    """
    spread = next((s for s in (baseline, current) if s.n >= 2 and s.std is not None), None)
    sides = []
    for stats in (baseline, current):
        assert stats.se is not None
        se, df = stats.se, stats.df
        if spread is not None and spread.std is not None:
            borrowed = spread.std / math.sqrt(stats.n)
            if borrowed > se:
                se, df = borrowed, float(spread.n - 1)
        sides.append((se, df))
    return sides[0], sides[1]


def tested(rule: MetricRule, baseline: MetricStats | None, current: MetricStats | None) -> bool:
    """Whether the row is in the significance test's Bonferroni family: errors stored on
    both sides. With fewer than 3 launches on a side the test judges it; with more, the
    launch-level rule's sampling term is held to the same level (`gate.launches`)."""
    return (
        rule.max is None
        and rule.noise
        and baseline is not None
        and current is not None
        and baseline.se is not None
        and current.se is not None
    )
