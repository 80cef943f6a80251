"""Percentiles and the vLLM benchmark timing definitions."""

import pytest

from specbench.metrics.latency import distribution, output_tok_s, per_gpu, percentile, tpot_ms


def test_percentile_matches_numpy_linear():
    values = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 90) == pytest.approx(7.6)  # numpy.percentile(values, 90)
    assert percentile(values, 99) == pytest.approx(9.76)
    assert percentile([5.0], 99) == 5.0


def test_distribution_of_empty_sample_is_none():
    empty = distribution([])
    assert empty.count == 0 and empty.median is None and empty.mean is None


def test_tpot_and_rates():
    assert tpot_ms(e2e_ms=1100.0, ttft_ms=100.0, output_tokens=101) == pytest.approx(10.0)
    assert tpot_ms(e2e_ms=100.0, ttft_ms=100.0, output_tokens=1) is None
    assert output_tok_s(2000, 4.0) == 500.0
    assert per_gpu(3321.6, 8) == pytest.approx(415.2)
    with pytest.raises(ValueError):
        output_tok_s(10, 0.0)
