"""The warnings a run prints about a cell, from its summary alone."""

from __future__ import annotations

from typing import Any

from specbench.measure.checks import cell_warnings, concurrency_warning
from specbench.metrics.latency import distribution
from specbench.store.summary import CellSummary


def summary(**fields: Any) -> CellSummary:
    base: dict[str, Any] = {
        "label": "eagle3",
        "workload": "w",
        "dataset": "mt-bench",
        "categories": None,
        "entropy_tiers": None,
        "category": None,
        "concurrency": 4,
        "repeat": 0,
        "gpus": None,
        "model": "m",
        "endpoint": "http://x",
        "api": "chat",
        "client": "aiohttp",
        "max_tokens": 16,
        "temperature": 0.0,
        "started_at": "t0",
        "finished_at": "t1",
        "num_requests": 10,
        "num_failed": 0,
        "duration_s": 1.0,
        "input_tokens": 100,
        "output_tokens": 160,
        "output_tok_s": 160.0,
        "output_tok_s_per_gpu": None,
        "request_per_s": 10.0,
        "ttft_ms": distribution([1.0]),
        "tpot_ms": distribution([1.0]),
        "e2e_ms": distribution([1.0]),
        "step_gap_ms": distribution([1.0]),
        "server_generation_tokens": 160,
        "spec_decode": None,
        "per_category": {},
    }
    return CellSummary(**{**base, **fields})


def test_a_clean_cell_has_no_warning():
    assert cell_warnings(summary(prefix_cache_reset=True, generation_tokens_mismatch=0.0)) == []


def test_a_refused_reset_is_loud_and_names_the_hit_rate():
    (line,) = cell_warnings(
        summary(
            prefix_cache_reset=False,
            prefix_cache_reset_detail="http://x/reset_prefix_cache answered HTTP 404",
            prefix_cache_hit_rate=0.62,
        )
    )
    assert line.startswith("PREFIX CACHE NOT RESET")
    assert "HTTP 404" in line and "62.0%" in line and "prefix_cache_reset = false" in line


def test_token_mismatch_beyond_one_percent_warns():
    assert cell_warnings(summary(generation_tokens_mismatch=-0.009)) == []
    (line,) = cell_warnings(
        summary(output_tokens=160, server_generation_tokens=170, generation_tokens_mismatch=-0.0588)
    )
    assert "(160)" in line and "(170)" in line and "-5.9%" in line


def test_failures_skipped_turns_and_preemptions_are_stated():
    lines = cell_warnings(summary(num_failed=3, num_skipped_turns=2, server_preemptions=7))
    assert lines == [
        "3 of 10 requests failed, 2 of them turns skipped after a failed turn; figures cover "
        "the successful ones only",
        "7 preemptions in the window: the server ran short of KV cache, so latencies include "
        "recomputation",
    ]


def test_concurrency_beyond_the_conversations_warns_once_with_every_level():
    assert concurrency_warning([1, 4, 8], 8) is None
    line = concurrency_warning([1, 16, 64, 16], 10)
    assert line is not None
    assert line.startswith("concurrency 16, 64 exceeds the 10 conversations")


def test_token_counts_that_disagree_invalidate_the_cell() -> None:
    from specbench.measure.checks import invalid_cell

    assert invalid_cell(summary(generation_tokens_mismatch=0.0)) is None
    assert invalid_cell(summary(generation_tokens_mismatch=None)) is None
    assert invalid_cell(summary(generation_tokens_mismatch=-0.009)) is None
    # The restart: the client got 8,576 tokens, the counters say 2,176 were generated.
    restarted = invalid_cell(
        summary(output_tokens=8576, server_generation_tokens=2176, generation_tokens_mismatch=2.94)
    )
    assert restarted is not None and "+294.0%" in restarted and "restarted" in restarted
    other = invalid_cell(summary(server_generation_tokens=320, generation_tokens_mismatch=-0.5))
    assert other is not None and "other traffic reached the server" in other
    # Failed requests explain a server ahead of the client: a warning, not an invalid cell.
    assert invalid_cell(summary(num_failed=2, generation_tokens_mismatch=-0.5)) is None
