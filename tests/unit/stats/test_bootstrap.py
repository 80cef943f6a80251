"""stats.bootstrap: resample counts and the ratio of means on known inputs."""

from __future__ import annotations

import numpy as np
import pytest

from specbench.stats.bootstrap import bootstrap_ratio_of_means, draw_counts


def test_draw_counts_counts_every_draw_of_every_resample():
    draws = np.array([[0, 0, 2], [1, 2, 2], [2, 2, 2]])
    assert draw_counts(draws, 3).tolist() == [[2, 0, 1], [0, 1, 2], [0, 0, 3]]


def test_bootstrap_ratio_of_means_brackets_the_value() -> None:
    speculative = [[200.0, 210.0], [190.0], [205.0], [195.0, 200.0]]
    baseline = [[100.0], [101.0, 99.0], [100.0], [100.0]]
    interval = bootstrap_ratio_of_means(speculative, baseline, seed=1)
    assert interval is not None
    # mean 200 / mean 100: pooled over requests, not over conversations.
    assert interval.value == pytest.approx(1000.0 / 5 / 100.0)
    assert interval.low <= interval.value <= interval.high
    assert interval.low > 1.9 and interval.high < 2.1
    assert bootstrap_ratio_of_means([[1.0]], [], seed=0) is None
    assert bootstrap_ratio_of_means([[1.0]], [[0.0]], seed=0) is None
