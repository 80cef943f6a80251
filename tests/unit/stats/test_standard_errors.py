"""stats.standard_errors: the small-sample factor and the error of a mean of repeats."""

from __future__ import annotations

import math

import pytest

from specbench.stats.standard_errors import combined_standard_error, small_sample_factor


def test_the_small_sample_factor():
    assert small_sample_factor(10) == pytest.approx(math.sqrt(10 / 9))
    assert small_sample_factor(1) == 1.0


def test_errors_of_repeats_combine_and_the_spread_wins_when_larger():
    # √(0.03² + 0.04²) / 2 = 0.025; std 0.01 over 2 repeats gives 0.0071: the bootstrap wins.
    assert combined_standard_error([0.03, 0.04], 0.01) == pytest.approx(0.025)
    # A spread of 0.1 over 2 repeats: 0.1/√2 = 0.0707 exceeds what each run saw.
    assert combined_standard_error([0.03, 0.04], 0.1) == pytest.approx(0.1 / math.sqrt(2))
    assert combined_standard_error([0.03], None) == pytest.approx(0.03)
    assert combined_standard_error([], None) is None
