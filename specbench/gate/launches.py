"""The launch-level rule: with ≥ 3 server launches on both sides, medians and MADs of launches.

A launch is a fresh start of the server; its value of a figure is its repeats aggregated
as the cell's value is (the mean over the launch's repeats; acceptance pooled over them).
With at least `MIN_LAUNCHES` launch values on each side the gate compares

    centre   m = median of the launch values                      (each side),
    spread   σ = 1.4826 × MAD = 1.4826 × median |x − m|           (each side),
    sampling s = se_L = √L × se, one launch's own standard error   (each side),
    noise      = max(k × √(σ_b² + σ_c²), z × √(s_b² + s_c²))      (k = `launch_sigmas`),
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

The sampling term is the conversations' own error, which the launches' spread does not
show when they re-measure the same conversations with deterministic outputs (acceptance
at temperature 0: the launch values agree exactly, MAD = 0, while a different candidate
meets other conversations' luck). se is the figure's stored error of the mean of its L
launches (√Σse²/n over its repeats), so √L × se is one launch's; 0 when none is stored.
z = Φ⁻¹(1 − α/m) is the one-sided bar of the gate's significance test at its Bonferroni
level (`gate.compare`: m counts these rows too), so the sampling term alone keeps the whole
gate's false alarms at α, as the within-launch rule does; k when the test is off. Without
it, 3 of 8 seed-only changes on the emulator failed (docs/ci-gate.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from specbench.gate.snapshot import MetricStats
from specbench.stats.launches import MIN_LAUNCHES, mad_sigma
from specbench.stats.significance import critical_value


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
    #: One launch's own standard error on each side (se_L = √L × se; 0: none stored).
    baseline_launch_se: float = 0.0
    current_launch_se: float = 0.0
    #: z: the sampling term is z × √(se_L,b² + se_L,c²) (0: off).
    sampling_z: float = 0.0

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
    def spread_noise(self) -> float:
        """k × √(σ_b² + σ_c²): the launches' spread, in the figure's units."""
        return self.sigmas * math.hypot(self.baseline_sigma, self.current_sigma)

    @property
    def sampling_noise(self) -> float:
        """z × √(se_L,b² + se_L,c²): the conversations' own error, in the figure's units."""
        return self.sampling_z * math.hypot(self.baseline_launch_se, self.current_launch_se)

    @property
    def noise(self) -> float:
        """The larger of the spread and the sampling term, in the figure's units."""
        return max(self.spread_noise, self.sampling_noise)

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
    baseline: MetricStats | None,
    current: MetricStats | None,
    sigmas: float,
    material: float,
    level: float | None = None,
) -> LaunchComparison | None:
    """The launch-level comparison, or None when a side has fewer than 3 launch values.

    `level`: the gate's per-figure significance level (α / m), whose one-sided bar z
    multiplies the sampling term; None (the test off): k does. `sigmas` 0 turns both off.
    """
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
        launch_se(baseline),
        launch_se(current),
        sampling_z=0.0 if sigmas == 0 else critical_value(level) if level is not None else sigmas,
    )


def launch_se(stats: MetricStats) -> float:
    """One launch's own standard error, se_L = √L × se (0 when no error is stored)."""
    return stats.se * math.sqrt(launch_count(stats)) if stats.se is not None else 0.0


def within_launch_rule(baseline: MetricStats | None, current: MetricStats | None) -> str:
    """`within-launch`, with why when either side had several launches:
    `within-launch (launches 3 vs 2: fewer than 3 on a side)`."""
    counts = launch_count(baseline), launch_count(current)
    if max(counts) < 2:
        return "within-launch"
    return (
        f"within-launch (launches {counts[0]} vs {counts[1]}: fewer than {MIN_LAUNCHES} on a side)"
    )
