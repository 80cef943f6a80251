"""Side figures of a cell's window: the load it really carried and the server's own counts.

Pure functions of numbers the cell saved (request records, `/metrics` deltas). Each
returns None when an input is absent, never a guessed value.
"""

from __future__ import annotations

from collections.abc import Iterable


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
