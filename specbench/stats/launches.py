"""Intervals over server launches: the launch as the replicated unit, and what one launch lacks.

A figure of one point (config × workload × concurrency) is measured on `n` launches (fresh
server starts), each possibly over several repeats. Per launch, its value `x_i` is the mean
over its repeats, with a within-launch standard error `se_i` (the cell's bootstrap over
conversations, or the spread of its repeats). The model of the point's mean is

    Var(mean) ≈ s²_between / n + s²_within / (n · n_conv)

(a launch-level component, plus each launch's within-launch noise over its `n_conv`
conversations). The estimator does not need the two terms apart: the sample variance of the
launch values, s² = Σ(x_i − x̄)² / (n − 1), already holds each launch mean's within-launch
noise, so s²/n estimates the whole Var(mean). Three kinds of interval follow:

- `launches` (n ≥ 2): x̄ ± t(1 − α/2, n − 1) · s / √n, Student t over launch values.
- `one-launch` (n = 1): the within-launch interval, x ± z(1 − α/2) · se (normal, as the
  bootstrap's); it does not cover the variance between launches, which one launch cannot
  measure.
- `calibrated` (n = 1, given an earlier campaign of ≥ 3 launches): x ± z · √(se² + τ²), τ
  the between-launch standard deviation that campaign measured, carried over as a fraction
  of the value (τ = cv · |x|) so it transfers from that campaign's cell to this one. τ² is
  the method-of-moments estimate of the pure launch component: max(0, s² − mean(se_i²)),
  the within-launch part taken out of the launch values' variance so it is not counted twice.

A ratio (speculative over baseline) has the delta-method interval of a ratio of means:
R = a / b, se(R)/|R| = √((se_a/a)² + (se_b/b)²), with Welch–Satterthwaite degrees of
freedom from each side's (∞ for a normal side), and bounds on the log scale,
R · exp(± t(1 − α/2, df) · se(R)/|R|) (the delta method of log R), which stay positive where
R ± t · se(R) would not. Its kind is the weaker of the two sides' (one-launch < calibrated <
launches).

Pure functions; no pandas.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import Literal

from specbench.stats.significance import t_or_normal_quantile

IntervalKind = Literal["launches", "one-launch", "calibrated"]
#: The kinds from the weakest to the strongest (a ratio's kind is its weaker side's).
KINDS: tuple[IntervalKind, ...] = ("one-launch", "calibrated", "launches")
#: What each kind covers, in the words of the report's footnotes.
KIND_WORDS: dict[str, str] = {
    "launches": "Student t over launch values",
    "one-launch": "one launch: between-launch variance not measured",
    "calibrated": "one launch, widened by the between-launch variance of an earlier campaign",
}
#: Launches a between-launch spread needs before it is trusted: to calibrate another
#: campaign (`--variance-from`), for the gate's launch-level rule on each side, and the
#: least a precision-targeted point measures (`suite.model.MIN_PRECISION_LAUNCHES`).
MIN_LAUNCHES = 3
#: MAD × this estimates σ of a normal distribution: 1 / Φ⁻¹(3/4).
MAD_TO_SIGMA = 1.4826


def mad_sigma(values: Sequence[float]) -> float:
    """1.4826 × median |x − median(x)|: a robust estimate of one launch's σ, which one
    outlying launch cannot inflate."""
    centre = median(values)
    return MAD_TO_SIGMA * median(abs(x - centre) for x in values)


#: The largest exponent `high` takes: math.exp overflows a float above about 709.78.
_MAX_EXPONENT = 700.0


@dataclass(frozen=True, slots=True)
class Interval:
    """A figure's value and its two-sided interval, with the levels it was built from."""

    value: float
    kind: IntervalKind
    launches: int
    #: Standard error of `value` the interval uses; None: none known (no bounds).
    standard_error: float | None
    #: Degrees of freedom of its quantile; None: a normal quantile.
    df: float | None
    #: Sample standard deviation of the launch values (n ≥ 2), else None.
    between_launch_sd: float | None
    #: Within-launch standard error of `value`: √Σse_i² / n; None where no launch had one.
    within_launch_se: float | None
    confidence: float = 0.95
    #: Bounds on the log scale, value · exp(±half_width / |value|): a ratio's, which stay
    #: positive however wide (the linear bounds of 0.36 ± 1.11 would read −0.74–1.47).
    log_scale: bool = False

    @property
    def half_width(self) -> float | None:
        """Quantile × standard error; None without a standard error."""
        if self.standard_error is None:
            return None
        return _quantile(self.confidence, self.df) * self.standard_error

    @property
    def low(self) -> float | None:
        half = self.half_width
        if half is None:
            return None
        if self.log_scale and self.value:
            return self.value * math.exp(-half / abs(self.value))
        return self.value - half

    @property
    def high(self) -> float | None:
        half = self.half_width
        if half is None:
            return None
        if self.log_scale and self.value:
            exponent = half / abs(self.value)
            # Unbounded above: a half-width hundreds of times the value (a Welch df near
            # or below 1 makes the t quantile astronomical) overflows exp(); said as +inf.
            return self.value * math.exp(exponent) if exponent < _MAX_EXPONENT else math.inf
        return self.value + half


def _quantile(confidence: float, df: float | None) -> float:
    finite = None if df is None or math.isinf(df) else df
    return t_or_normal_quantile(0.5 + confidence / 2.0, finite)


def within_standard_error(errors: Sequence[float | None]) -> float | None:
    """√Σse_i² / n: the within-launch error of a mean of n launch values; None if any lacks one."""
    if not errors or any(e is None for e in errors):
        return None
    return math.sqrt(sum(e * e for e in errors if e is not None)) / len(errors)


def between_launch_cv(values: Sequence[float], errors: Sequence[float | None]) -> float | None:
    """τ / |x̄|: the pure between-launch standard deviation as a fraction of the mean.

    τ² = max(0, s² − mean(se_i²)) (s² the launch values' sample variance; se_i² taken as 0
    where a launch has no error, which keeps τ conservative). None below two launches or
    at a zero mean.
    """
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    if mean == 0:
        return None
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    within = sum(e * e for e in errors if e is not None) / len(values)
    return math.sqrt(max(0.0, variance - within)) / abs(mean)


def launch_interval(
    values: Sequence[float],
    errors: Sequence[float | None],
    *,
    calibration_cv: float | None = None,
    confidence: float = 0.95,
) -> Interval:
    """The interval of a figure from its launch values and their within-launch errors.

    `values[i]`: launch i's value (mean over its repeats); `errors[i]`: its within-launch
    standard error or None. `calibration_cv`: τ/|x| of an earlier campaign
    (`between_launch_cv`), used only with one launch.
    """
    if not values or len(values) != len(errors):
        raise ValueError("one within-launch error (or None) per launch value, at least one")
    n = len(values)
    mean = sum(values) / n
    within = within_standard_error(errors)
    if n >= 2:
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
        return Interval(mean, "launches", n, sd / math.sqrt(n), n - 1, sd, within, confidence)
    if calibration_cv is not None:
        tau = calibration_cv * abs(mean)
        se = math.hypot(within or 0.0, tau)
        return Interval(mean, "calibrated", 1, se, None, None, within, confidence)
    return Interval(mean, "one-launch", 1, within, None, None, within, confidence)


def ratio_interval(numerator: Interval, denominator: Interval) -> Interval | None:
    """numerator / denominator with its delta-method interval (Welch–Satterthwaite df).

    None at a zero denominator. Without a standard error on either side, no bounds.
    """
    if denominator.value == 0:
        return None
    ratio = numerator.value / denominator.value
    weakest = min(numerator.kind, denominator.kind, key=KINDS.index)
    launches = min(numerator.launches, denominator.launches)
    if numerator.standard_error is None or denominator.standard_error is None:
        return Interval(ratio, weakest, launches, None, None, None, None, numerator.confidence)
    a = (numerator.standard_error / numerator.value) ** 2 if numerator.value else math.inf
    b = (denominator.standard_error / denominator.value) ** 2
    se = abs(ratio) * math.sqrt(a + b)
    return Interval(
        ratio,
        weakest,
        launches,
        se,
        _welch_df(a, numerator.df, b, denominator.df),
        None,
        None,
        numerator.confidence,
        log_scale=True,
    )


def _welch_df(a: float, df_a: float | None, b: float, df_b: float | None) -> float | None:
    """(a + b)² / (a²/df_a + b²/df_b); a normal side (df None) adds nothing; None: normal."""
    terms = [x * x / df for x, df in ((a, df_a), (b, df_b)) if df is not None]
    if not terms or sum(terms) == 0:
        return None
    return (a + b) ** 2 / sum(terms)
