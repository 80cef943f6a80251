"""Standard errors: of a ratio over bootstrap resamples, of a mean of repeats, of a change.

Pure functions of numbers and arrays; what a figure's error is estimated from (a cell's
records) is `measure.cell_errors`'s, how the gate tests a change `stats.significance`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def ratio_standard_error(
    times: np.ndarray, numerator: np.ndarray, denominator: np.ndarray
) -> float | None:
    """Standard error of Σ num / Σ den over resamples (resamples with Σ den = 0 skipped).

    times[r, i]: how often resample r drew cluster i (`stats.bootstrap.draw_counts`).
    """
    top, bottom = times @ numerator, times @ denominator
    valid = bottom > 0
    if valid.sum() < 2:
        return None
    return float(np.std(top[valid] / bottom[valid], ddof=1))


def scaled_error(se: float | None, estimate: float, reported: float | None) -> float | None:
    """`se` of the resampled estimate carried onto the reported figure (same relative error)."""
    if se is None or reported is None:
        return None
    if estimate == 0:
        return se
    return se * abs(reported / estimate)


def small_sample_factor(conversations: int) -> float:
    """√(n / (n − 1)): the bootstrap variance of a mean over n clusters is (n − 1)/n of the
    usual unbiased one; with strata, n is the smallest stratum the figure draws from."""
    return (conversations / (conversations - 1)) ** 0.5 if conversations > 1 else 1.0


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
