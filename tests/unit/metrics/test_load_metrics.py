"""Side figures of a window: achieved concurrency, prefix-cache hit rate, token cross-check."""

import pytest

from specbench.metrics.latency import per_gpu
from specbench.metrics.load import (
    achieved_concurrency,
    prefix_cache_hit_rate,
    token_count_mismatch,
)


def test_achieved_concurrency_is_little_law_over_the_window():
    # 4 slots busy for the whole 10 s window, then a 5 s drain tail with 1 request left:
    # 4 × 10 s + 1 × 5 s of request time over 15 s = 3.0 in flight, not the nominal 4.
    durations = [10_000_000_000] * 4 + [5_000_000_000]
    assert achieved_concurrency(durations, 15.0) == pytest.approx(3.0)
    assert achieved_concurrency([], 15.0) is None
    assert achieved_concurrency(durations, 0.0) is None


def test_prefix_cache_hit_rate_from_the_probe_counts():
    # vLLM 0.32 on CPU (handoff probes §2): the same 708-token prompt repeated without a
    # reset hit 640 tokens (5 blocks of 128).
    assert prefix_cache_hit_rate(640, 708) == pytest.approx(0.904, abs=1e-3)
    assert prefix_cache_hit_rate(0, 708) == 0.0
    assert prefix_cache_hit_rate(None, 708) is None
    assert prefix_cache_hit_rate(0, 0) is None
    with pytest.raises(ValueError):
        prefix_cache_hit_rate(709, 708)


def test_token_count_mismatch_is_relative_to_the_server():
    assert token_count_mismatch(120, 120) == 0.0
    assert token_count_mismatch(5339, 5379) == pytest.approx(-40 / 5379)
    assert token_count_mismatch(10, None) is None
    assert token_count_mismatch(0, 0) == 0.0


def test_per_gpu_without_a_gpu_count_is_none_never_a_guess():
    assert per_gpu(1000.0, None) is None
    assert per_gpu(1000.0, 8) == 125.0
