"""Is a worsening real? A one-sided t test per figure, Bonferroni over the figures gated.

Each side of a comparison carries its figure's standard error (the within-run cluster
bootstrap, combined with the between-repeat spread: `stats.standard_errors`). For one
figure,

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

A figure regresses when d exceeds its tolerance AND p ≤ α / m; `stats.power` says which
worsening that rule catches.
"""

from __future__ import annotations

from statistics import NormalDist

from specbench.stats.student_t import student_t_cdf, student_t_quantile

_NORMAL = NormalDist()
#: z(0.975): a 95% normal interval's half-width over its standard error.
Z95 = _NORMAL.inv_cdf(0.975)


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


def t_or_normal_quantile(p: float, df: float | None) -> float:
    """The p-quantile of Student's t with ν = `df`, of the standard normal without ν."""
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
    return t_or_normal_quantile(1 - level, df)
