"""Decode rate, step time and the paper's speedup proxy; the ratio-of-means bootstrap."""

from __future__ import annotations

import pytest

from specbench.metrics.speedup import (
    compare_per_gpu,
    decode_rate_tok_s,
    proxy_speedup,
    step_time_ms,
    throughput_speedup,
)


def test_decode_rate_is_tokens_over_the_decode_phase() -> None:
    # 256 tokens, TTFT 40 ms, E2E 1,040 ms: 256 tokens over 1 s of decode.
    assert decode_rate_tok_s(256, 1000.0) == pytest.approx(256.0)
    assert decode_rate_tok_s(1, 0.0) is None  # one chunk: no decode phase
    with pytest.raises(ValueError, match="negative"):
        decode_rate_tok_s(-1, 1.0)


def test_proxy_is_al_times_the_step_time_ratio() -> None:
    # AL 2.5 with a verify step 25% dearer than an autoregressive step: 2.0x.
    assert proxy_speedup(2.5, 10.0, 12.5) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="below 1"):
        proxy_speedup(0.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="positive"):
        proxy_speedup(2.0, 0.0, 1.0)


def test_step_time_pools_time_over_steps() -> None:
    assert step_time_ms(1000.0, 400) == 2.5
    assert step_time_ms(0.0, 0) is None


def test_throughput_speedup_compares_per_gpu_only_when_every_side_knows_its_gpus() -> None:
    assert compare_per_gpu(True, True) is True
    assert compare_per_gpu(True, False) is False
    assert throughput_speedup(300.0, 120.0) == pytest.approx(2.5)
    assert throughput_speedup(300.0, 0.0) is None
    assert throughput_speedup(None, 120.0) is None
    assert throughput_speedup(300.0, float("nan")) is None
