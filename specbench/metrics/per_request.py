"""Acceptance from per-request data, which lets one mixed run be split by category.

Two sources, each with its own definition (record both with every number):

- `per_request_metrics` (step-weighted): vLLM's per-request `metrics.speculative_decoding`
  objects pooled over requests, AL = 1 + Σ num_accepted_draft_tokens / Σ num_spec_steps.
  Over the same requests this equals the `/metrics` counter AL.
- `tokens_per_chunk` (mean over requests): a streamed chunk carries one engine step's
  tokens, so a request's AL ≈ (tokens after the first chunk) / (chunks after the first).
  The first chunk is dropped because it is the prefill step (one token, no drafts); the
  last chunk is kept (it is a real verification step, even when cut short by max_tokens or
  EOS, as in the counters). Requests with fewer than two chunks have no estimate. The
  cell value is the plain mean of per-request (per-turn) values. It is NOT the official
  SPEED-Bench AL of NVIDIA specdec_bench (that one is per question over all its turns,
  counts the prefill chunk and removes a final EOS: `specbench.metrics.official`). It is
  an estimate: a server that coalesces steps into one chunk inflates it. Direction:
  higher is better.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from specbench.metrics.acceptance import (
    acceptance_length,
    draft_acceptance_rate,
    per_position_from_histogram,
)


@dataclass(frozen=True, slots=True)
class PooledAcceptance:
    """Per-request spec-decode objects summed over a set of requests."""

    acceptance_length: float | None
    draft_acceptance_rate: float | None
    per_position_acceptance: list[float] | None
    num_spec_steps: int
    num_accepted_draft_tokens: int
    num_draft_tokens: int


def pool_request_metrics(objects: Iterable[Mapping[str, Any]]) -> PooledAcceptance:
    """Σ over requests of steps, accepted and drafted tokens and histograms, then the rates."""
    steps = accepted = drafted = 0
    histogram: list[int] = []
    for spec in objects:
        steps += int(spec["num_spec_steps"])
        accepted += int(spec["num_accepted_draft_tokens"])
        drafted += int(spec["num_draft_tokens"])
        for index, count in enumerate(spec.get("acceptance_histogram") or ()):
            if index >= len(histogram):
                histogram.append(0)
            histogram[index] += int(count)
    return PooledAcceptance(
        acceptance_length=acceptance_length(accepted, steps),
        draft_acceptance_rate=draft_acceptance_rate(accepted, drafted),
        per_position_acceptance=per_position_from_histogram(histogram) if histogram else None,
        num_spec_steps=steps,
        num_accepted_draft_tokens=accepted,
        num_draft_tokens=drafted,
    )


def chunk_acceptance_length(chunk_tokens: Sequence[int]) -> float | None:
    """One request's AL estimate: Σ tokens of chunks 2..n / (n − 1); None when n < 2."""
    if len(chunk_tokens) < 2:
        return None
    return sum(chunk_tokens[1:]) / (len(chunk_tokens) - 1)


def mean_chunk_acceptance_length(requests_chunk_tokens: Iterable[Sequence[int]]) -> float | None:
    """Mean over requests of `chunk_acceptance_length` (requests without an estimate skipped)."""
    values = [al for al in map(chunk_acceptance_length, requests_chunk_tokens) if al is not None]
    return sum(values) / len(values) if values else None


def per_step_drafted_counts(objects: Iterable[Mapping[str, Any] | None]) -> dict[int, int] | None:
    """K → verify steps that drafted K tokens, over the requests' `per_step_drafted` arrays.

    vLLM sends `per_step_drafted` (the K of each verify step, in order) only with
    `--per-request-spec-decode-metrics detailed`; under a `num_speculative_tokens_per_batch_size`
    schedule it is the one place the K of each step shows (`/metrics` keeps only sums). Keys
    ascend. None when no request carried the array (not `detailed`, or not speculating).
    """
    counts: dict[int, int] = {}
    seen = False
    for spec in objects:
        drafted = spec.get("per_step_drafted") if spec else None
        if drafted is None:
            continue
        seen = True
        for k in drafted:
            if int(k) < 0:
                raise ValueError(f"a verify step cannot draft {k} tokens")
            counts[int(k)] = counts.get(int(k), 0) + 1
    return dict(sorted(counts.items())) if seen else None
