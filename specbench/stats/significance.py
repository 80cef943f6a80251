"""Is a worsening real? A one-sided t test per figure, Bonferroni over the figures gated.

Each side of a comparison carries its figure's standard error (`MetricStats.se`: the
within-run cluster bootstrap, combined with the between-repeat spread). For one figure,

    worsening  d = (baseline − current) for higher-is-better, (current − baseline) else,
    SE_d       = √(se_b² + se_c²)                              (independent runs),
    p          = 1 − T_ν(d / SE_d)                             (H0: no worsening),

with T_ν Student's t at the Welch–Satterthwaite degrees of freedom
ν = SE_d⁴ / (se_b⁴/ν_b + se_c⁴/ν_c), each side's ν being its conversations − 1 (a
bootstrap error from few conversations is itself uncertain: with 11 conversations per
category, the critical value at 0.0045 is 2.93 rather than the normal 2.61). Without
degrees of freedom the normal distribution is used.

The family is every figure × cell tested in one gate run (m of them); each is tested at
level α / m (Bonferroni), so the chance that any unchanged figure is called significant is
at most α (0.05 by default) whatever m is. Bonferroni rather than Holm: every row is then
judged at the same level, so the interval a row shows decides it on its own, and the power
the gate prints is the power it has (Holm would only help rows after the first rejection).

A figure regresses when d exceeds its tolerance AND p ≤ α / m. Power: a true worsening Δ
is caught when the observed d clears both bars, max(tolerance, z_{1−α/m}·SE_d); d is
normal around Δ with sd SE_d, so it is caught with probability `power` once

    Δ ≥ max(tolerance, t_{1−α/m}·SE_d) + t_power·SE_d       (minimum detectable worsening).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from specbench.analysis.stats import student_t_cdf, student_t_quantile

_NORMAL = NormalDist()


def combined_standard_error(
    within: Sequence[float], std_over_repeats: float | None
) -> float | None:
    """Standard error of the mean of n repeats from their own errors and their spread.

    within: each repeat's bootstrap error; the mean's error from them is √Σse²/n. With
    n ≥ 2 the spread over repeats gives another, std/√n, which also holds what the
    bootstrap cannot see (run-to-run effects such as batch nondeterminism) but rests on
    n − 1 degrees of freedom; the larger of the two is kept. None without errors.
    """
    n = len(within)
    if n == 0:
        return None
    from_within = math.sqrt(sum(se**2 for se in within)) / n
    if n >= 2 and std_over_repeats is not None:
        return max(from_within, std_over_repeats / math.sqrt(n))
    return from_within


def difference_error(baseline_se: float, current_se: float) -> float:
    """SE of current − baseline for independent runs: √(se_b² + se_c²)."""
    return math.hypot(baseline_se, current_se)


def welch_df(
    baseline_se: float, baseline_df: float | None, current_se: float, current_df: float | None
) -> float | None:
    """ν = (se_b² + se_c²)² / (se_b⁴/ν_b + se_c⁴/ν_c); None when a side's ν is unknown."""
    if baseline_df is None or current_df is None or baseline_df <= 0 or current_df <= 0:
        return None
    a, b = baseline_se**2, current_se**2
    if a + b == 0:
        return None
    return (a + b) ** 2 / (a**2 / baseline_df + b**2 / current_df)


def _cdf(x: float, df: float | None) -> float:
    return _NORMAL.cdf(x) if df is None else student_t_cdf(x, df)


def _quantile(p: float, df: float | None) -> float:
    return _NORMAL.inv_cdf(p) if df is None else student_t_quantile(p, df)


def worsening_p_value(worsening: float, difference_se: float, df: float | None = None) -> float:
    """One-sided p of H0 "no worsening": 1 − T_ν(d / SE_d); 0.5 at d = 0, small when worse."""
    if difference_se <= 0:
        return 0.0 if worsening > 0 else 1.0
    return 1 - _cdf(worsening / difference_se, df)


def bonferroni_level(alpha: float, tests: int) -> float:
    """Per-figure level α / m that keeps the family-wise false-alarm rate at most α."""
    return alpha / max(1, tests)


def critical_value(level: float, df: float | None = None) -> float:
    """t_{1−level, ν} (z_{1−level} without ν): the one-sided bar (1.645 at 0.05, normal)."""
    return _quantile(1 - level, df)


def detectable_worsening(
    allowed: float, difference_se: float, level: float, power: float = 0.8, df: float | None = None
) -> float:
    """Smallest true worsening caught with probability `power`: max(tol, t·SE_d) + t_p·SE_d."""
    bar = max(allowed, critical_value(level, df) * difference_se)
    return bar + _quantile(power, df) * difference_se


def difference_error_for(
    allowed: float,
    level: float,
    *,
    power: float = 0.8,
    margin: float = 1.5,
    df: float | None = None,
) -> float:
    """The SE_d at which a worsening of `margin` × the tolerance is caught with `power`.

    Solves max(tol, t·SE_d) + t_p·SE_d = margin·tol for SE_d: (margin − 1)·tol / t_p while
    the significance bar stays under the tolerance, else margin·tol / (t + t_p).
    """
    bar, margin_quantile = critical_value(level, df), _quantile(power, df)
    below = (margin - 1) * allowed / margin_quantile
    return below if bar * below <= allowed else margin * allowed / (bar + margin_quantile)
