"""Side figures of a window: achieved concurrency, prefix-cache hit rate, token cross-check,
the running batch."""

import pytest

from specbench.metrics.latency import per_gpu
from specbench.metrics.load import (
    achieved_concurrency,
    prefix_cache_hit_rate,
    running_batch,
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


def test_the_running_batch_is_time_weighted_over_uneven_polls():
    # Polls at 0, 0.1, 0.4 and 1.5 s of a 2 s window; each value holds until the next
    # poll, the last until the window's end: (4·0.1 + 16·0.3 + 10·1.1 + 2·0.5) / 2.0.
    samples = [(0.0, 4), (0.1, 16), (0.4, 10), (1.5, 2)]
    batch = running_batch(samples, 2.0)
    assert batch.mean == pytest.approx((0.4 + 4.8 + 11.0 + 1.0) / 2.0)  # 8.6
    assert batch.samples == 4
    # The plain mean of the values would say 8.0: the long-held 10 weighs more.
    assert batch.mean != pytest.approx(sum(v for _, v in samples) / 4)


def test_the_running_batch_starts_at_the_first_poll_and_ends_with_the_window():
    # A first poll 0.5 s in: the mean covers [0.5, 1.5], not the unseen first half second.
    assert running_batch([(0.5, 1), (1.0, 3)], 1.5).mean == pytest.approx((0.5 + 1.5) / 1.0)
    # A poll answered after the window closed is not part of it.
    late = running_batch([(0.0, 2), (1.0, 4), (1.6, 99)], 1.5)
    assert late.mean == pytest.approx((2 * 1.0 + 4 * 0.5) / 1.5)
    assert late.samples == 2


def test_one_poll_or_no_gauge_gives_no_running_batch():
    assert running_batch([(0.2, 7)], 3.0).mean is None
    assert running_batch([(0.2, 7)], 3.0).samples == 1
    # An attached server without vllm:num_requests_running: every poll lacks the gauge.
    absent = running_batch([(0.0, None), (0.25, None), (0.5, None)], 1.0)
    assert (absent.mean, absent.samples) == (None, 0)
    assert running_batch([], 1.0).mean is None


def test_impossible_polls_raise():
    with pytest.raises(ValueError, match="not go back"):
        running_batch([(0.5, 1), (0.2, 1)], 1.0)
    with pytest.raises(ValueError, match="negative"):
        running_batch([(0.0, -1), (0.2, 1)], 1.0)
