"""Acceptance metrics of speculative decoding (vLLM's step-weighted definitions).

A verification step of one request carries k drafts; the target accepts the first n of
them (0 ≤ n ≤ k) and emits n + 1 tokens (the accepted drafts plus one bonus token).
All functions are pure: impossible inputs raise ValueError, absent inputs return None.
"""

from __future__ import annotations

from collections.abc import Sequence


def acceptance_length(num_accepted_tokens: int, num_drafts: int) -> float | None:
    """AL = 1 + accepted / drafts: tokens emitted per verification step, bonus included.

    Step-weighted over every step of the window (1.0 means no speedup). Higher is better.
    None when no step carried drafts.
    """
    if num_accepted_tokens < 0 or num_drafts < 0:
        raise ValueError("acceptance counts cannot be negative")
    if num_drafts == 0:
        return None
    return 1.0 + num_accepted_tokens / num_drafts


def draft_acceptance_rate(num_accepted_tokens: int, num_draft_tokens: int) -> float | None:
    """accepted / draft_tokens: the fraction of proposed draft tokens that were accepted."""
    if num_accepted_tokens < 0 or num_draft_tokens < 0:
        raise ValueError("acceptance counts cannot be negative")
    if num_accepted_tokens > num_draft_tokens:
        raise ValueError(f"accepted {num_accepted_tokens} > proposed {num_draft_tokens}")
    if num_draft_tokens == 0:
        return None
    return num_accepted_tokens / num_draft_tokens


def per_position_acceptance(
    accepted_per_position: Sequence[int], num_drafts: int
) -> list[float] | None:
    """rate[i] = (steps with at least i+1 drafts accepted) / steps, position 1 first.

    Non-increasing in i, and AL = 1 + Σ rate[i].
    """
    if num_drafts == 0:
        return None
    if any(count < 0 or count > num_drafts for count in accepted_per_position):
        raise ValueError(
            f"per-position counts {list(accepted_per_position)} outside [0, {num_drafts}]"
        )
    return [count / num_drafts for count in accepted_per_position]


def conditional_acceptance(rates: Sequence[float]) -> list[float | None]:
    """cond[i] = rate[i] / rate[i-1] with rate[-1] := 1: P(accept i+1 | accepted first i).

    None where the previous position was never accepted (the ratio is undefined).
    """
    conditional: list[float | None] = []
    previous = 1.0
    for rate in rates:
        conditional.append(rate / previous if previous > 0 else None)
        previous = rate
    return conditional


def per_position_from_histogram(histogram: Sequence[int]) -> list[float] | None:
    """Per-position rates from a dense acceptance histogram (vLLM's per-request field).

    histogram[j] = steps that accepted exactly j drafts (j = 0..k), so
    rate[i] = Σ_{j > i} histogram[j] / Σ_j histogram[j], for i = 0..k-1.
    """
    steps = sum(histogram)
    if steps == 0:
        return None
    rates: list[float] = []
    at_least = steps - histogram[0]
    for j in range(1, len(histogram)):
        rates.append(at_least / steps)
        at_least -= histogram[j]
    return rates


def effective_k(num_draft_tokens: int, num_drafts: int) -> float | None:
    """K_eff = draft tokens / drafts: draft tokens proposed per verification step.

    From the window's Δ `vllm:spec_decode_num_draft_tokens_total` / Δ
    `vllm:spec_decode_num_drafts_total`. A fixed K gives exactly K; under a
    `num_speculative_tokens_per_batch_size` schedule it is the step-weighted mean of the
    K each step verified, which `/metrics` cannot show step by step. Neither direction is
    better. None when no step carried drafts (speculation off, or K = 0 throughout).
    """
    if num_draft_tokens < 0 or num_drafts < 0:
        raise ValueError("draft counts cannot be negative")
    if num_drafts == 0:
        return None
    return num_draft_tokens / num_drafts
