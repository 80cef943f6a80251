"""The emulator's known truth about K: the steady-state output rate at each concurrency and
K, and the best K, from its time model alone (`engine.step_cost_ms`).

In a closed loop of c requests that all decode, every step verifies K drafts per request
and gives each request AL(K) = 1 + Σ_{i<K} Π_{j≤i} p_j tokens on average (p the
conditional acceptance of each draft position), so the output rate is

    rate(c, K) = c · AL(K) / step_cost_ms(c decoding, K) · 1000   tok/s

(K = 0: the baseline, AL 1, no draft or verify cost). Prefill steps and the drain tail are
left out: it is the steady state a long cell approaches, and what advice about K is tested
against. Pure; nothing here starts a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specbench.emulator.config import EmulatorConfig
from specbench.emulator.engine import step_cost_ms


def expected_acceptance_length(acceptance: Sequence[float], k: int) -> float:
    """1 + Σ_{i<k} Π_{j≤i} p_j: the tokens a verify step gives on average with the first
    `k` positions of `acceptance` (k = 0: 1, a step without drafts)."""
    if k > len(acceptance):
        raise ValueError(f"K = {k} needs {k} acceptance values, {len(acceptance)} given")
    total, survive = 1.0, 1.0
    for probability in acceptance[:k]:
        survive *= probability
        total += survive
    return total


def steady_rate_tok_s(
    config: EmulatorConfig, concurrency: int, k: int, acceptance: Sequence[float]
) -> float:
    """Output tok/s of `concurrency` requests decoding, each step verifying `k` drafts."""
    if concurrency < 1:
        raise ValueError(f"concurrency {concurrency}: at least 1")
    step_ms = step_cost_ms(config, 0, concurrency, k)
    return concurrency * expected_acceptance_length(acceptance, k) / step_ms * 1000.0


@dataclass(frozen=True, slots=True)
class BestK:
    """The truth at one concurrency: each K's rate, the best K and its margin."""

    concurrency: int
    rates: dict[int, float]  # K → tok/s (K = 0: the baseline)
    best: int
    #: (best rate − runner-up rate) / runner-up rate; 0 when only one K.
    margin: float


def best_k(
    config: EmulatorConfig, concurrency: int, ks: Sequence[int], acceptance: Sequence[float]
) -> BestK:
    """The K of `ks` with the highest steady rate at `concurrency` (ties: the smaller K)."""
    rates = {k: steady_rate_tok_s(config, concurrency, k, acceptance) for k in sorted(set(ks))}
    ranked = sorted(rates, key=lambda k: (-rates[k], k))
    best = ranked[0]
    margin = (rates[best] - rates[ranked[1]]) / rates[ranked[1]] if len(ranked) > 1 else 0.0
    return BestK(concurrency, rates, best, margin)
