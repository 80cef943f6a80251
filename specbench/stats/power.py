"""The power of the one-sided test of `stats.significance`: which true worsening it catches.

A true worsening Δ is caught when the observed d clears both bars, max(tolerance,
t_{1−α/m}·SE_d); d is normal around Δ with sd SE_d, so it is caught with probability
`power` once

    Δ ≥ max(tolerance, t_{1−α/m}·SE_d) + t_power·SE_d       (minimum detectable worsening).
"""

from __future__ import annotations

from specbench.stats.significance import critical_value, t_or_normal_quantile


def detectable_worsening(
    allowed: float, difference_se: float, level: float, power: float = 0.8, df: float | None = None
) -> float:
    """Smallest true worsening caught with probability `power`: max(tol, t·SE_d) + t_p·SE_d."""
    bar = max(allowed, critical_value(level, df) * difference_se)
    return bar + t_or_normal_quantile(power, df) * difference_se


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
    bar, margin_quantile = critical_value(level, df), t_or_normal_quantile(power, df)
    below = (margin - 1) * allowed / margin_quantile
    return below if bar * below <= allowed else margin * allowed / (bar + margin_quantile)
