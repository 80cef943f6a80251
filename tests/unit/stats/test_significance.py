"""stats.significance and stats.power: critical values, p values, the Bonferroni level,
Welch's degrees of freedom and the detectable worsening, on known values."""

from __future__ import annotations

import pytest

from specbench.stats.power import detectable_worsening, difference_error_for
from specbench.stats.significance import (
    bonferroni_level,
    critical_value,
    welch_df,
    worsening_p_value,
)
from specbench.stats.standard_errors import difference_error


def test_critical_values_p_values_and_the_bonferroni_level():
    assert critical_value(0.05) == pytest.approx(1.6449, abs=1e-4)
    assert critical_value(0.005) == pytest.approx(2.5758, abs=1e-4)
    assert bonferroni_level(0.05, 10) == pytest.approx(0.005)
    assert bonferroni_level(0.05, 0) == 0.05
    assert difference_error(0.03, 0.04) == pytest.approx(0.05)
    # d = 1.645 SE is significant at 5% one-sided, exactly.
    assert worsening_p_value(1.6449 * 0.05, 0.05) == pytest.approx(0.05, abs=1e-4)
    assert worsening_p_value(0.0, 0.05) == pytest.approx(0.5)
    assert worsening_p_value(-1.0, 0.05) == pytest.approx(1.0)
    # Student t with 10 degrees of freedom: t_{0.95, 10} = 1.8125, t_{0.995, 10} = 3.1693.
    assert critical_value(0.05, 10) == pytest.approx(1.8125, abs=1e-4)
    assert critical_value(0.005, 10) == pytest.approx(3.1693, abs=1e-4)
    assert worsening_p_value(1.8125 * 0.05, 0.05, 10) == pytest.approx(0.05, abs=1e-4)
    # Welch: equal errors on both sides add their degrees of freedom; one side alone keeps its.
    assert welch_df(0.02, 10, 0.02, 10) == pytest.approx(20)
    assert welch_df(0.02, 10, 0.0, 30) == pytest.approx(10)
    assert welch_df(0.02, None, 0.02, 10) is None


def test_detectable_regression_is_the_larger_bar_plus_the_power_margin():
    # Tolerance 2% above the significance bar (2.576 × 0.5% = 1.29%): 2% + 0.8416 × 0.5%.
    assert detectable_worsening(0.02, 0.005, 0.005, 0.8) == pytest.approx(0.024208, abs=1e-6)
    # Significance bar 1.645 × 1% above the 1% tolerance: 1.645% + 0.842%.
    assert detectable_worsening(0.01, 0.01, 0.05, 0.8) == pytest.approx(0.024865, abs=1e-6)
    # The SE that detects 1.5 × tolerance is the inverse, on both branches.
    for level in (0.05, 0.0005):
        error = difference_error_for(0.02, level, power=0.8, margin=1.5)
        assert detectable_worsening(0.02, error, level, 0.8) == pytest.approx(0.03)
