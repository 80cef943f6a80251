"""The emulator's known truth about K: the steady-state output rate at each concurrency and
K, and the best K, from its time model alone (`engine.step_cost_ms`).

In a closed loop of c requests that all decode, every step verifies K drafts per request
and gives each request AL(K) = 1 + Σ_{i<K} Π_{j≤i} p_j tokens on average (p the
conditional acceptance of each draft position), so the output rate is

    rate(c, K) = c · AL(K) / step_cost_ms(c decoding, K) · 1000   tok/s

(K = 0: the baseline, AL 1, no draft or verify cost). Prefill steps and the drain tail are
left out: it is the steady state a long cell approaches, and what advice about K is tested
against.

A schedule (`num_speculative_tokens_per_batch_size`) in that steady state sees c requests
in every step, so every step verifies K_s = the schedule's K at batch c (clamped to the
maximum) and

    rate_schedule(c) = c · AL(K_s) / step_cost_ms(c decoding, K_s, drafter runs) · 1000

where K_s = 0 is not the baseline: each step still pays one `draft_step_ms`.

Energy (the exporter's power model, `emulator.power`): over a window that finds the server
idle at both edges, the counted GPUs G use exactly

    E = idle_w · |G| · Δt + (J/generated · ΔG + J/drafted · ΔD) · |G ∩ work| / |work|

and in the steady state a verify step drafts K tokens per AL(K) it emits, so

    J/token(c, K) = idle_w · |G| / rate(c, K) + J/generated + J/drafted · K / AL(K)

(all work GPUs counted). Speculation shortens the time each token holds the idle draw and
pays for its drafts: it saves energy where it raises the rate enough, and costs energy once
verification makes it slower (`energy_crossover`). Pure; nothing here starts a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specbench.common.k_schedule import KSchedule, k_for_batch
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


def schedule_rate_tok_s(
    config: EmulatorConfig, concurrency: int, schedule: KSchedule, acceptance: Sequence[float]
) -> float:
    """Output tok/s of `concurrency` requests decoding under `schedule`, its K at that
    batch clamped to `config.num_speculative_tokens`: rate_schedule(c) of the module
    docstring."""
    if concurrency < 1:
        raise ValueError(f"concurrency {concurrency}: at least 1")
    k = k_for_batch(schedule, concurrency, config.num_speculative_tokens)
    step_ms = step_cost_ms(config, 0, concurrency, k, drafter_runs=True)
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


def _work_share(config: EmulatorConfig, counted_gpus: Sequence[int]) -> float:
    """The fraction of the work GPUs among the counted ones (token energy is spread evenly)."""
    work = config.work_gpus
    return len(set(work) & set(counted_gpus)) / len(work)


def window_energy_j(
    config: EmulatorConfig,
    duration_s: float,
    generated: float,
    drafted: float,
    counted_gpus: Sequence[int],
) -> float:
    """The counted GPUs' energy over a window of `duration_s` in which the engine generated
    `generated` and drafted `drafted` tokens: E of the module docstring, exact."""
    idle = config.power_idle_w * len(set(counted_gpus)) * duration_s
    work = config.energy_per_generated_token_j * generated
    work += config.energy_per_drafted_token_j * drafted
    return idle + work * _work_share(config, counted_gpus)


def joules_per_output_token(
    config: EmulatorConfig,
    concurrency: int,
    k: int,
    acceptance: Sequence[float],
    counted_gpus: Sequence[int],
) -> float:
    """The counted GPUs' steady-state joules per output token at `concurrency`, each step
    verifying `k` drafts (0: the baseline): J/token(c, K) of the module docstring."""
    rate = steady_rate_tok_s(config, concurrency, k, acceptance)
    drafted_per_token = k / expected_acceptance_length(acceptance, k)
    per_token = config.energy_per_generated_token_j
    per_token += config.energy_per_drafted_token_j * drafted_per_token
    idle = config.power_idle_w * len(set(counted_gpus)) / rate
    return idle + per_token * _work_share(config, counted_gpus)


def energy_crossover(
    config: EmulatorConfig,
    concurrencies: Sequence[int],
    k: int,
    acceptance: Sequence[float],
    counted_gpus: Sequence[int],
) -> int | None:
    """The first of `concurrencies` (in the order given) at which speculation with `k`
    drafts uses more joules per output token than the baseline; None if it never does."""
    for concurrency in concurrencies:
        speculative = joules_per_output_token(config, concurrency, k, acceptance, counted_gpus)
        baseline = joules_per_output_token(config, concurrency, 0, acceptance, counted_gpus)
        if speculative > baseline:
            return concurrency
    return None
