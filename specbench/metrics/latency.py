"""Latency and throughput metrics, with vLLM's own benchmark definitions.

Per request (all times relative to the request's send instant):
- TTFT = arrival of the first chunk carrying tokens − send. Lower is better.
- E2E  = arrival of the last chunk carrying tokens − send. Lower is better.
- TPOT = (E2E − TTFT) / (output_tokens − 1), for requests with ≥ 2 output tokens. Lower is better.
- step gap = arrival of a token-carrying chunk − arrival of the previous one. Under
  speculation one chunk carries one engine step's tokens, so this is per step, not per token.

Per cell: interactivity = 1000 / median TPOT (ms), the output tokens per second one user
sees (InferenceX's x axis against tok/s/GPU). Higher is better.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import Field

from specbench.common.model import Frozen


class Distribution(Frozen):
    """Summary statistics of one per-request quantity over the successful requests."""

    mean: float | None = Field(description="Arithmetic mean; None when no sample.")
    median: float | None = Field(description="50th percentile (linear interpolation).")
    p90: float | None = Field(description="90th percentile (linear interpolation).")
    p99: float | None = Field(description="99th percentile (linear interpolation).")
    count: int = Field(description="Number of samples.")


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100), linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        raise ValueError("percentile of an empty sample")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} outside [0, 100]")
    rank = (len(sorted_values) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    fraction = rank - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def distribution(values: Sequence[float]) -> Distribution:
    """Mean, median, p90 and p99 of a sample; all None for an empty sample."""
    if not values:
        return Distribution(mean=None, median=None, p90=None, p99=None, count=0)
    ordered = sorted(values)
    return Distribution(
        mean=sum(ordered) / len(ordered),
        median=percentile(ordered, 50),
        p90=percentile(ordered, 90),
        p99=percentile(ordered, 99),
        count=len(ordered),
    )


def tpot_ms(e2e_ms: float, ttft_ms: float, output_tokens: int) -> float | None:
    """(E2E − TTFT) / (output_tokens − 1); None below two output tokens."""
    if output_tokens < 2:
        return None
    return (e2e_ms - ttft_ms) / (output_tokens - 1)


def interactivity_tok_s_per_user(tpot_ms_median: float) -> float | None:
    """Interactivity = 1000 / median TPOT (ms): output tokens per second per user.

    The rate one request's decode streams at, from the cell's median time per output token
    (`tpot_ms`); 20 ms per token is 50 tok/s/user. Higher is better. None when the median
    TPOT is 0 (every turn's tokens came in its first chunk: no decode time to divide by).
    """
    if tpot_ms_median < 0 or math.isnan(tpot_ms_median):
        raise ValueError(f"median TPOT must be a non-negative number of ms, got {tpot_ms_median}")
    if tpot_ms_median == 0:
        return None
    return 1000.0 / tpot_ms_median


def output_tok_s(output_tokens: int, duration_s: float) -> float:
    """Σ output tokens / wall time of the measured window. Higher is better."""
    if duration_s <= 0:
        raise ValueError(f"window duration must be positive, got {duration_s}")
    return output_tokens / duration_s


def per_gpu(rate: float, gpus: int | None) -> float | None:
    """A rate divided by the GPUs serving it (TP × PP × DP); None when gpus is unknown."""
    if gpus is None:
        return None
    if gpus <= 0:
        raise ValueError(f"gpus must be positive, got {gpus}")
    return rate / gpus
