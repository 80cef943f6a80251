"""Where speculation's energy per token crosses the baseline's (`analysis.energy.crossover`)."""

from __future__ import annotations

import math

import pandas as pd

from specbench.analysis.energy import Crossover, crossover


def data(rows: list[tuple[int, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["concurrency", "speculative", "baseline"])


def test_the_first_change_of_side_between_measured_neighbours() -> None:
    found = crossover(data([(1, 0.18, 0.25), (4, 0.13, 0.12), (16, 0.12, 0.08)]))
    assert found == Crossover(below=1, above=4, lower_before=True)


def test_a_point_missing_a_side_is_skipped_and_equal_values_take_no_side() -> None:
    rows = [(1, 0.2, 0.3), (2, math.nan, 0.2), (4, 0.1, 0.1), (8, 0.3, 0.2)]
    assert crossover(data(rows)) == Crossover(below=1, above=8, lower_before=True)


def test_no_crossover_when_speculation_stays_on_one_side() -> None:
    assert crossover(data([(1, 0.3, 0.2), (4, 0.25, 0.2)])) is None
    assert crossover(data([(1, 0.3, 0.2)])) is None
