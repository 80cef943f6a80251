"""Metric directions: declared once in metrics/declarations.py, read by the gate's defaults."""

from __future__ import annotations

import pytest

from specbench.gate.rules import DEFAULT_RULES
from specbench.metrics.declarations import stored
from specbench.metrics.directions import direction_of


def test_statistics_and_family_members_take_their_metric_direction():
    assert direction_of("acceptance_length") == "higher"
    assert direction_of("per_position_acceptance_2") == "higher"
    assert direction_of("ttft_ms_p99") == direction_of("ttft_ms_median") == "lower"
    assert direction_of("output_tok_s_per_gpu") == "higher"
    assert direction_of("num_failed") == "lower"
    with pytest.raises(KeyError):
        direction_of("duration_s")


def test_the_gate_defaults_use_the_declared_directions():
    assert {name: rule.direction for name, rule in DEFAULT_RULES.items()} == {
        "acceptance_length": "higher",
        "official_acceptance_length": "higher",
        "per_position_acceptance": "higher",
        "category_acceptance_length": "higher",
        "output_tok_s_per_gpu": "higher",
        "ttft_ms_median": "lower",
        "e2e_ms_median": "lower",
        "interactivity_tok_s_per_user": "higher",
        "num_failed": "lower",
    }


def test_every_gated_quality_metric_has_a_direction():
    # Counts and durations of the window (num_requests, duration_s, tokens) are not judged,
    # nor the window's joules and mean power: both grow with the load, not with quality
    # (energy per output token is the judged energy figure).
    unjudged = {"num_requests", "duration_s", "input_tokens", "output_tokens"}
    unjudged |= {"energy_joules", "mean_power_w_per_gpu"}
    # Nor the drafts per step: a larger K is neither better nor worse in itself.
    unjudged |= {"effective_k"}
    for metric in (*stored("mean"), *stored("pooled")):
        if metric not in unjudged:
            assert direction_of(metric) in ("higher", "lower"), metric
