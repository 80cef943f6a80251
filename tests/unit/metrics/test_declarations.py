"""The figure declarations and the lists every consumer derives from them."""

from __future__ import annotations

import pytest

from specbench.metrics.declarations import (
    FIGURES,
    TTFT_MS,
    figure_of,
    gated,
    serving_rows,
    stored,
    targeted,
    targeted_phrase,
    with_intervals,
)

#: The gate's stored figures as main listed them by hand: a baseline's key order.
MEAN_BEFORE = (
    "num_requests",
    "num_failed",
    "duration_s",
    "input_tokens",
    "output_tokens",
    "output_tok_s",
    "output_tok_s_per_gpu",
    "request_per_s",
    *(
        f"{name}_{stat}"
        for name in ("ttft_ms", "tpot_ms", "e2e_ms", "step_gap_ms")
        for stat in ("mean", "median", "p90", "p99")
    ),
)


def test_the_stored_figures_keep_the_order_baselines_were_written_in():
    assert stored("mean")[: len(MEAN_BEFORE)] == MEAN_BEFORE
    assert stored("pooled") == ("acceptance_length", "draft_acceptance_rate", "effective_k")
    assert stored("mean_acceptance") == ("official_acceptance_length",)


def test_the_serving_table_reads_throughput_e2e_ttft_as_the_cards_do():
    names = [f.name for f in serving_rows()]
    assert names[:3] == ["output_tok_s_per_gpu", "e2e_ms_median", "ttft_ms_median"]
    assert serving_rows(per_gpu=False)[0].name == "output_tok_s"
    assert all(f.table is not None for f in serving_rows(per_gpu=False))


def test_the_gate_watches_acceptance_first_and_the_failure_ceiling_last():
    names = [f.name for f in gated()]
    assert names[:7] == [
        "acceptance_length",
        "official_acceptance_length",
        "per_position_acceptance",
        "category_acceptance_length",
        "output_tok_s_per_gpu",
        "ttft_ms_median",
        "e2e_ms_median",
    ]
    assert names[-1] == "num_failed"


def test_precision_targets_follow_the_serving_table():
    names = [f.name for f in targeted()]
    assert names[:3] == ["output_tok_s_per_gpu", "e2e_ms_median", "ttft_ms_median"]
    assert targeted_phrase().startswith("tok/s/GPU, E2E p50")
    # Every target is shown in the serving table (the precision table reads like it).
    assert {f.name for f in targeted()} <= {f.name for f in serving_rows()}


def test_statistics_and_members_resolve_to_their_declaration():
    assert figure_of("ttft_ms_p99") is TTFT_MS
    assert figure_of("ttft_ms_median").statistic == ("ttft_ms", "median")  # type: ignore[union-attr]
    assert figure_of("per_position_acceptance_3").name == "per_position_acceptance"  # type: ignore[union-attr]
    assert figure_of("acceptance_length_2") is None  # a scalar has no members
    assert figure_of("ttft_ms_count") is None


def test_every_declaration_is_whole():
    names = [f.name for f in FIGURES]
    assert len(names) == len(set(names))
    for f in FIGURES:
        assert f.unit and f.definition, f.name
        if f.gate is not None or f.precision is not None or f.serving_row is not None:
            assert f.direction is not None, f.name
        if f.serving_row is not None:
            assert f.table is not None, f.name
    with pytest.raises(ValueError, match="no statistic"):
        TTFT_MS.statistic_of("p50")


def test_intervals_cover_every_serving_row_and_both_acceptance_lengths() -> None:
    names = with_intervals()
    assert names == (
        "acceptance_length",
        "official_acceptance_length",
        "output_tok_s_per_gpu",
        "ttft_ms_median",
        "ttft_ms_p90",
        "ttft_ms_p99",
        "tpot_ms_median",
        "tpot_ms_p90",
        "tpot_ms_p99",
        "e2e_ms_median",
        "e2e_ms_p90",
        "e2e_ms_p99",
        "interactivity_tok_s_per_user",
        "joules_per_output_token",
    )
    # Every row of the serving table carries one; a statistic declared on its own is not
    # listed twice.
    assert {f.name for f in serving_rows()} <= set(names)
    assert len(set(names)) == len(names)
