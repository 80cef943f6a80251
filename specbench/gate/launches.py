"""The launch-level rule: with ≥ 3 server launches on both sides, medians and MADs of launches.

A launch is a fresh start of the server; its value of a figure is its repeats aggregated
as the cell's value is (the mean over the launch's repeats; acceptance pooled over them).
With at least `MIN_LAUNCHES` launch values on each side the gate compares

    centre   m = median of the launch values                      (each side),
    spread   σ = 1.4826 × MAD = 1.4826 × median |x − m|           (each side),
    noise      = k × √(σ_b² + σ_c²)                               (k = `launch_sigmas`),
    material   = μ × |m_b|                                        (μ = the rule's `material`),

and calls a worsening d (m_b − m_c for higher-is-better, m_c − m_b else) a regression when
d > material AND d > noise; an improvement the same way the other side; a worsening
beyond the material threshold but not the noise is `within_noise` (passes).

1.4826 = 1 / Φ⁻¹(3/4) makes the MAD an estimate of a normal distribution's σ that one
outlying launch cannot inflate. σ is the spread of one launch, not the error of the
median: the rule asks that the candidate's typical launch sit k launch-sigmas of the
pair beyond the baseline's, which with 3 launches a side keeps a pure-noise figure below
the bar 93% of the time at k = 2 (83% at k = 1; seeded simulation in the unit tests);
the material threshold carries the rest, since a figure whose launches agree to far
better than 2% would otherwise fail on changes nobody cares about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from specbench.gate.snapshot import MetricStats
from specbench.stats.launches import MIN_LAUNCHES, mad_sigma


def launch_count(stats: MetricStats | None) -> int:
    """Launches behind a figure: its launch values, else 1 (one launch, or an older file)."""
    if stats is None:
        return 0
    return len(stats.launch_values) if stats.launch_values else 1


@dataclass(frozen=True, slots=True)
class LaunchComparison:
    """Both sides' launch values of one figure and the rule's settings."""

    baseline: tuple[float, ...]
    current: tuple[float, ...]
    #: k: the noise is k × √(σ_b² + σ_c²).
    sigmas: float
    #: μ: material is μ × |baseline median|.
    material: float

    @property
    def baseline_median(self) -> float:
        return median(self.baseline)

    @property
    def current_median(self) -> float:
        return median(self.current)

    @property
    def baseline_sigma(self) -> float:
        return mad_sigma(self.baseline)

    @property
    def current_sigma(self) -> float:
        return mad_sigma(self.current)

    @property
    def noise(self) -> float:
        """k × √(σ_b² + σ_c²), in the figure's units."""
        return self.sigmas * math.hypot(self.baseline_sigma, self.current_sigma)

    @property
    def threshold(self) -> float:
        """The material worsening, in the figure's units: μ × |baseline median|."""
        return self.material * abs(self.baseline_median)

    def describe(self) -> str:
        """`launches (3 vs 3, median/MAD, material 2%)`."""
        return (
            f"launches ({len(self.baseline)} vs {len(self.current)}, median/MAD, "
            f"material {self.material * 100:g}%)"
        )


def launch_comparison(
    baseline: MetricStats | None, current: MetricStats | None, sigmas: float, material: float
) -> LaunchComparison | None:
    """The launch-level comparison, or None when a side has fewer than 3 launch values."""
    if baseline is None or current is None:
        return None
    if launch_count(baseline) < MIN_LAUNCHES or launch_count(current) < MIN_LAUNCHES:
        return None
    assert baseline.launch_values is not None and current.launch_values is not None
    return LaunchComparison(
        tuple(baseline.launch_values.values()),
        tuple(current.launch_values.values()),
        sigmas,
        material,
    )


def within_launch_rule(baseline: MetricStats | None, current: MetricStats | None) -> str:
    """`within-launch`, with why when either side had several launches:
    `within-launch (launches 3 vs 2: fewer than 3 on a side)`."""
    counts = launch_count(baseline), launch_count(current)
    if max(counts) < 2:
        return "within-launch"
    return (
        f"within-launch (launches {counts[0]} vs {counts[1]}: fewer than {MIN_LAUNCHES} on a side)"
    )
