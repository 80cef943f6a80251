"""Which way is better, read from each figure's declaration (`metrics/declarations.py`).

The gate's default rules take their direction from the declarations too; a rules file may
still state one. Names are the summary's metric names; a distribution (`ttft_ms`, …)
covers each of its statistics (`ttft_ms_median`, `ttft_ms_p99`, …), and a family covers
its members (`per_position_acceptance_2`, a category's `acceptance_length`).
"""

from __future__ import annotations

from specbench.metrics.declarations import Direction, figure_of

__all__ = ["Direction", "direction_of"]


def direction_of(metric: str) -> Direction:
    """The better direction of a metric, a distribution statistic or a family member.

    KeyError for a metric with no declared direction (the caller names it to the user).
    """
    figure = figure_of(metric)
    if figure is None or figure.direction is None:
        raise KeyError(metric)
    return figure.direction
