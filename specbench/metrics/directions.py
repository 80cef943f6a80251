"""Which way is better, declared once per metric beside its definition.

The gate's default rules read their direction here (`gate/rules.py`); a rules file may
still state one. Names are the summary's metric names; a distribution (`ttft_ms`, …)
covers each of its statistics (`ttft_ms_median`, `ttft_ms_p99`, …), and a family covers
its members (`per_position_acceptance_2`, a category's `acceptance_length`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower"]


@dataclass(frozen=True, slots=True)
class MetricDirection:
    """A metric's better direction and its one-line definition."""

    direction: Direction
    definition: str


#: Metric (or family) name → direction and definition. Formulas live in the metric modules.
DIRECTIONS: dict[str, MetricDirection] = {
    "acceptance_length": MetricDirection(
        "higher", "1 + accepted / drafts over the window's steps (metrics/acceptance.py)"
    ),
    "official_acceptance_length": MetricDirection(
        "higher", "mean over questions of Σ tokens / Σ chunks (metrics/official.py)"
    ),
    "per_position_acceptance": MetricDirection(
        "higher", "accepted at draft position i / drafts (metrics/acceptance.py)"
    ),
    "category_acceptance_length": MetricDirection(
        "higher", "acceptance length of one category of a mixed run, pooled per request"
    ),
    "draft_acceptance_rate": MetricDirection("higher", "accepted / draft tokens, in [0, 1]"),
    "output_tok_s": MetricDirection("higher", "output tokens / window duration"),
    "output_tok_s_per_gpu": MetricDirection("higher", "output tokens / duration / GPUs"),
    "request_per_s": MetricDirection("higher", "successful requests / window duration"),
    "ttft_ms": MetricDirection("lower", "first token-carrying chunk − send (metrics/latency.py)"),
    "tpot_ms": MetricDirection("lower", "(E2E − TTFT) / (output tokens − 1)"),
    "e2e_ms": MetricDirection("lower", "last token-carrying chunk − send"),
    "step_gap_ms": MetricDirection("lower", "gap between consecutive token-carrying chunks"),
    "num_failed": MetricDirection("lower", "requests that ended with an error record"),
}

_STATISTICS = ("_mean", "_median", "_p90", "_p99")


def direction_of(metric: str) -> Direction:
    """The better direction of a metric, a distribution statistic or a family member.

    KeyError for a metric with no declared direction (the caller names it to the user).
    """
    if metric in DIRECTIONS:
        return DIRECTIONS[metric].direction
    for suffix in _STATISTICS:
        if metric.endswith(suffix) and metric[: -len(suffix)] in DIRECTIONS:
            return DIRECTIONS[metric[: -len(suffix)]].direction
    family, _, position = metric.rpartition("_")
    if position.isdigit() and family in DIRECTIONS:
        return DIRECTIONS[family].direction
    raise KeyError(metric)
