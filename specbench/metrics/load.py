"""Side figures of a cell's window: the load it really carried and the server's own counts.

Pure functions of numbers the cell saved (request records, `/metrics` deltas). Each
returns None when an input is absent, never a guessed value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def achieved_concurrency(request_durations_ns: Iterable[int], window_s: float) -> float | None:
    """Mean requests in flight over the window: Σ request time (send → end) / window time.

    Little's law over the measured window. A closed loop holds `c` requests in flight only
    while work remains: the drain tail (fewer conversations left than slots) and the gaps
    between a turn and the next pull it below `c`. Higher means the window really carried
    its nominal load; None when the window has no duration or no request was sent.
    """
    durations = list(request_durations_ns)
    if window_s <= 0 or not durations:
        return None
    return sum(durations) / 1e9 / window_s


def prefix_cache_hit_rate(hits: int | None, queries: int | None) -> float | None:
    """Δ vllm:prefix_cache_hits_total / Δ vllm:prefix_cache_queries_total, in [0, 1].

    Prompt tokens found in the prefix cache over prompt tokens looked up in the window.
    Lower is what a fresh-cache benchmark wants; None without the counters or queries.
    """
    if hits is None or queries is None or queries <= 0:
        return None
    if hits < 0 or hits > queries:
        raise ValueError(f"prefix-cache hits {hits} outside [0, queries={queries}]")
    return hits / queries


def token_count_mismatch(client_tokens: int, server_tokens: int | None) -> float | None:
    """(client Σ output tokens − server Δ vllm:generation_tokens_total) / server Δ.

    0 when both count the same tokens (vLLM 0.32: exactly, measured); negative when the
    server generated tokens the client never counted (requests that failed midway, or
    traffic from elsewhere in the window). Closer to 0 is better; None without the counter.
    """
    if server_tokens is None:
        return None
    if server_tokens == 0:
        return 0.0 if client_tokens == 0 else None
    return (client_tokens - server_tokens) / server_tokens


@dataclass(frozen=True, slots=True)
class RunningBatch:
    """The running batch over a window: its time-weighted mean and the samples behind it."""

    #: None with fewer than two samples of the gauge inside the window.
    mean: float | None
    #: Samples of the gauge inside the window (those the mean used).
    samples: int


def running_batch(samples: Iterable[tuple[float, float | None]], window_s: float) -> RunningBatch:
    """Time-weighted mean of `vllm:num_requests_running` over the measured window.

    `samples` are (t, value) pairs, t seconds since the window's start, in time order;
    value None where the scrape lacked the gauge (skipped). Each value holds until the
    next sample and the last until the window's end, so the mean covers [t_0, window_s]:
    Σ v_i · (t_{i+1} − t_i) / (window_s − t_0), with t_n := window_s. Samples at or after
    the window's end are dropped (the window had closed).

    This is vLLM's "batch size" (requests scheduled in a step), which a K schedule's ranges
    are in; a client's concurrency only bounds it. Neither direction is better. The mean
    is None with fewer than two samples (one sample says nothing of how long it held).
    """
    points: list[tuple[float, float]] = []
    for t_s, value in samples:
        if t_s < 0 or (points and t_s < points[-1][0]):
            raise ValueError(f"sample times must start at 0 or later and not go back: {t_s}")
        if value is None or t_s >= window_s:
            continue
        if value < 0:
            raise ValueError(f"a running batch cannot be negative: {value}")
        points.append((t_s, value))
    if len(points) < 2:
        return RunningBatch(mean=None, samples=len(points))
    ends = [t for t, _ in points[1:]] + [window_s]
    weighted = sum(value * (end - t) for (t, value), end in zip(points, ends, strict=True))
    return RunningBatch(mean=weighted / (window_s - points[0][0]), samples=len(points))
