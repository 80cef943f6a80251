"""The Change column and value formats, worded and rounded as the model cards print them."""

from __future__ import annotations

import pytest

from specbench.analysis import wording as W
from specbench.data.categories import category_name


@pytest.mark.parametrize(
    ("speculative", "baseline", "expected"),
    [
        (415.2, 281.7, "1.47×"),  # REFERENCE.md §1
        (29.4, 16.6, "1.77×"),
        (10.44, 9.96, "1.05×"),  # shown 10.4 vs 10.0, but 1.0482 unrounded
        (90.0, 100.0, "0.90×"),
        (0.0, 100.0, "n/a"),
        (100.0, float("nan"), "n/a"),
    ],
)
def test_throughput_change(speculative: float, baseline: float, expected: str) -> None:
    assert W.throughput_change(speculative, baseline) == expected


@pytest.mark.parametrize(
    ("speculative_ms", "baseline_ms", "expected"),
    [
        (9680.0, 13150.0, "1.36× faster"),  # REFERENCE.md §1
        (11000.0, 10000.0, "1.10× slower"),
        (10000.0, 10000.0, "1.00× faster"),
    ],
)
def test_latency_change(speculative_ms: float, baseline_ms: float, expected: str) -> None:
    assert W.latency_change(speculative_ms, baseline_ms) == expected


@pytest.mark.parametrize(
    ("speculative_ms", "baseline_ms", "expected"),
    [
        (154.0, 130.0, "+18.5% latency"),  # REFERENCE.md §1: 1.18462
        (95.0, 100.0, "\u22125.0% latency"),
        (100.0, 100.0, "+0.0% latency"),
        (99.99, 100.0, "+0.0% latency"),  # rounds to zero: no "−0.0%"
    ],
)
def test_percent_latency_change(speculative_ms: float, baseline_ms: float, expected: str) -> None:
    assert W.percent_latency_change(speculative_ms, baseline_ms) == expected


def test_value_formats() -> None:
    assert W.tok_s(415.2) == "415.2 tok/s"
    assert W.tok_s(12345.67) == "12,345.7 tok/s"
    assert W.seconds_from_ms(9680.0) == "9.68 s"
    assert W.seconds_from_ms(45.0) == "0.045 s"
    assert W.milliseconds(154.2) == "154 ms"
    assert W.milliseconds(42.25) == "42.2 ms"
    assert W.milliseconds(4.206) == "4.21 ms"
    assert W.percent(0.556185) == "55.62%"


def test_names() -> None:
    assert [category_name(c) for c in ("rag", "stem", "qa", "coding", "low_entropy")] == [
        "RAG",
        "STEM",
        "QA",
        "Coding",
        "Low entropy",
    ]
    assert W.dataset_name("speed-bench:qualitative") == "SPEED-Bench (qualitative)"
    assert W.dataset_name("mt-bench") == "MT-Bench"
    local = "speed-bench:qualitative:/data/speed_bench"
    assert W.dataset_name(local, "qualitative") == "SPEED-Bench (qualitative)"
    assert W.dataset_name(local) == "SPEED-Bench (qualitative)"
    assert W.dataset_name("/data/x.parquet", "throughput_8k") == "SPEED-Bench (throughput_8k)"
    assert W.dataset_phrase("speed-bench:qualitative") == "SPEED-Bench qualitative"
