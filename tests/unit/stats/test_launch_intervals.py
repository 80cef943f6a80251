"""The launch-level intervals (`stats.launches`), against values computed by hand."""

from __future__ import annotations

import math

import pytest

from specbench.stats.launches import (
    Interval,
    between_launch_cv,
    launch_interval,
    ratio_interval,
    within_standard_error,
)


def test_three_launches_give_a_student_t_interval_over_launch_values() -> None:
    # mean 11, s = 1, se = 1/√3, t(0.975, 2) = 4.3027: half-width 2.4841.
    interval = launch_interval([10.0, 12.0, 11.0], [0.5, 0.5, 0.5])
    assert interval.kind == "launches"
    assert interval.launches == 3
    assert interval.value == pytest.approx(11.0)
    assert interval.between_launch_sd == pytest.approx(1.0)
    assert interval.df == 2
    assert interval.half_width == pytest.approx(4.302653 / math.sqrt(3), abs=1e-5)
    assert interval.half_width == pytest.approx(2.48414, abs=1e-5)
    assert (interval.low, interval.high) == pytest.approx((8.51586, 13.48414), abs=1e-5)
    # √(3 × 0.25) / 3: the within-launch error of the mean, reported beside it.
    assert interval.within_launch_se == pytest.approx(0.288675, abs=1e-6)


def test_two_launches_use_one_degree_of_freedom() -> None:
    interval = launch_interval([100.0, 104.0], [None, None])
    # s = 2.828, se = 2, t(0.975, 1) = 12.706.
    assert interval.half_width == pytest.approx(12.7062 * 2, abs=1e-3)
    assert interval.within_launch_se is None


def test_one_launch_is_the_within_launch_interval_labelled_so() -> None:
    interval = launch_interval([100.0], [2.0])
    assert interval.kind == "one-launch"
    assert interval.between_launch_sd is None
    assert interval.half_width == pytest.approx(1.959964 * 2.0, abs=1e-5)


def test_one_launch_without_an_error_has_no_bounds() -> None:
    interval = launch_interval([100.0], [None])
    assert interval.kind == "one-launch"
    assert (interval.half_width, interval.low, interval.high) == (None, None, None)


def test_calibration_widens_one_launch_by_the_relative_between_launch_sd() -> None:
    # τ = 0.03 × 100 = 3; se = √(2² + 3²) = 3.6056; half-width 1.96 × 3.6056 = 7.0668.
    interval = launch_interval([100.0], [2.0], calibration_cv=0.03)
    assert interval.kind == "calibrated"
    assert interval.standard_error == pytest.approx(math.sqrt(13.0))
    assert interval.half_width == pytest.approx(7.06675, abs=1e-5)


def test_calibration_is_ignored_once_launches_are_measured() -> None:
    interval = launch_interval([10.0, 12.0, 11.0], [0.5] * 3, calibration_cv=0.5)
    assert interval.kind == "launches"
    assert interval.half_width == pytest.approx(2.48414, abs=1e-5)


def test_between_launch_cv_takes_the_within_launch_part_out() -> None:
    # s² = 1, mean(se²) = 0.25: τ = √0.75 = 0.8660, over the mean 11.
    assert between_launch_cv([10.0, 12.0, 11.0], [0.5] * 3) == pytest.approx(0.0787296, abs=1e-7)
    # Launch values closer than their own noise: no launch component left.
    assert between_launch_cv([10.0, 10.1, 10.2], [1.0] * 3) == 0.0
    assert between_launch_cv([10.0], [0.5]) is None


def test_within_standard_error_needs_every_launch() -> None:
    assert within_standard_error([3.0, 4.0]) == pytest.approx(2.5)
    assert within_standard_error([3.0, None]) is None


def test_ratio_of_one_launch_each_is_a_normal_delta_method_interval() -> None:
    # R = 1.5, relative errors 0.02 each: se = 1.5 × √0.0008 = 0.042426, × 1.96 = 0.083154.
    ratio = ratio_interval(launch_interval([150.0], [3.0]), launch_interval([100.0], [2.0]))
    assert ratio is not None
    assert ratio.kind == "one-launch"
    assert ratio.value == pytest.approx(1.5)
    assert ratio.half_width == pytest.approx(0.083154, abs=1e-6)


def test_ratio_over_launches_uses_welch_degrees_of_freedom() -> None:
    # spec [150, 156, 153]: se √3; baseline [100, 102, 101]: se 1/√3; R = 153/101.
    # a = 3/153², b = (1/3)/101²; se(R) = R √(a + b) = 0.019211; df = (a+b)²/((a²+b²)/2) = 2.958.
    ratio = ratio_interval(
        launch_interval([150.0, 156.0, 153.0], [None] * 3),
        launch_interval([100.0, 102.0, 101.0], [None] * 3),
    )
    assert ratio is not None
    assert ratio.kind == "launches"
    assert ratio.value == pytest.approx(1.514851, abs=1e-6)
    assert ratio.standard_error == pytest.approx(0.0192113, abs=1e-7)
    assert ratio.df == pytest.approx(2.95764, abs=1e-4)
    assert ratio.half_width == pytest.approx(0.061637, abs=1e-5)
    # Bounds on the log scale: R · exp(∓0.061637 / R) = 1.454450 and 1.577751.
    assert (ratio.low, ratio.high) == pytest.approx((1.454450, 1.577751), abs=1e-5)


def test_a_wide_ratio_interval_stays_positive() -> None:
    # R = 0.36 with relative errors 1.5 and 0.5: se(R)/R = √2.5 = 1.5811; linear bounds
    # 0.36 ± 1.96 · 0.5692 reach −0.76; the log-scale ones are 0.36 · exp(∓3.0990).
    ratio = ratio_interval(launch_interval([36.0], [54.0]), launch_interval([100.0], [50.0]))
    assert ratio is not None
    assert ratio.value - ratio.half_width < 0
    assert (ratio.low, ratio.high) == pytest.approx(
        (0.36 * math.exp(-1.959964 * math.sqrt(2.5)), 0.36 * math.exp(1.959964 * math.sqrt(2.5))),
        rel=1e-5,
    )
    assert ratio.low > 0


def test_a_ratio_takes_the_weaker_kind_and_refuses_a_zero_denominator() -> None:
    spec = launch_interval([150.0, 156.0, 153.0], [None] * 3)
    ratio = ratio_interval(spec, launch_interval([100.0], [2.0], calibration_cv=0.01))
    assert ratio is not None and ratio.kind == "calibrated"
    assert ratio_interval(spec, launch_interval([0.0], [1.0])) is None


def test_values_and_errors_must_pair_up() -> None:
    with pytest.raises(ValueError):
        launch_interval([1.0, 2.0], [None])
    with pytest.raises(ValueError):
        launch_interval([], [])


def test_a_ratio_interval_too_wide_for_a_float_is_unbounded_above_not_an_overflow() -> None:
    # The CPU demo's report raised OverflowError (math range error) here: a ratio of 0.01
    # with a half-width of 19.6 (exp(1,960)). Its upper bound is +inf; the lower one near 0.
    wide = Interval(
        value=0.01, kind="one-launch", launches=1, standard_error=10.0, df=None,
        between_launch_sd=None, within_launch_se=10.0, log_scale=True,
    )  # fmt: skip
    assert wide.high == math.inf
    assert wide.low == pytest.approx(0.01 * math.exp(-1959.96), abs=1e-300)
    # Just inside the float range the bound is still computed.
    near = Interval(
        value=1.0, kind="one-launch", launches=1, standard_error=699.0 / 1.959964, df=None,
        between_launch_sd=None, within_launch_se=None, log_scale=True,
    )  # fmt: skip
    assert near.high == pytest.approx(math.exp(699.0), rel=1e-4)
