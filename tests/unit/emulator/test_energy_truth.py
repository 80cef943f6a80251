"""The emulator's truth about energy (issue 41, part 4): a window's exact joules, the
steady-state joules per output token, and the concurrency where speculation starts to cost
energy, checked against figures worked by hand."""

from __future__ import annotations

import pytest

from specbench.emulator.config import EmulatorConfig, make_emulator_config
from specbench.emulator.truth import (
    energy_crossover,
    expected_acceptance_length,
    joules_per_output_token,
    steady_rate_tok_s,
    window_energy_j,
)

ACCEPTANCE = (0.9, 0.85, 0.8, 0.75, 0.7, 0.65)
ALL_GPUS = range(8)
CONCURRENCIES = [1, 2, 4, 8, 16, 32, 64]


def _config(**options: object) -> EmulatorConfig:
    """The K-pricing test's time model (10 ms steps, 0.2 ms per request, K priced at
    0.2 / 0.3 / 16) on 8 GPUs, the work on 0-3: 100 W idle, 0.05 J generated, 0.03 J drafted."""
    settings: dict[str, object] = {
        "port": 1,
        "step_ms": 10.0,
        "per_request_step_ms": 0.2,
        "num_speculative_tokens": 6,
        "acceptance": ACCEPTANCE,
        "draft_step_ms": 0.2,
        "verify_token_ms": 0.3,
        "compute_knee_tokens": 16,
        "exporter_port": 2,
        "exporter_work_gpus": "0,1,2,3",
        "power_idle_w": 100.0,
        "energy_per_generated_token_j": 0.05,
        "energy_per_drafted_token_j": 0.03,
    }
    return make_emulator_config(**{**settings, **options})


def test_a_window_uses_idle_watts_times_time_plus_its_tokens() -> None:
    config = _config()
    # 8 GPUs · 100 W · 2.5 s = 2000 J; 0.05 · 1000 + 0.03 · 3000 = 140 J
    assert window_energy_j(config, 2.5, 1000, 3000, ALL_GPUS) == pytest.approx(2140.0)
    # Counting GPUs 0 and 5: 2 · 250 J idle, and half the work (GPU 0 of the four)
    assert window_energy_j(config, 2.5, 1000, 3000, [0, 5]) == pytest.approx(535.0)


def test_joules_per_token_is_idle_power_over_the_rate_plus_the_tokens_own() -> None:
    config = _config()
    # Baseline at c = 1: a 10 ms step per token, 100 tok/s → 800 W / 100 + 0.05
    assert joules_per_output_token(config, 1, 0, ACCEPTANCE, ALL_GPUS) == pytest.approx(8.05)
    # K = 3 at c = 1: AL = 1 + .9 + .765 + .612 = 3.277, step 10 + 0.2·3 = 10.6 ms
    al = 3.277
    rate = al / 10.6 * 1000
    expected = 800 / rate + 0.05 + 0.03 * 3 / al
    assert expected_acceptance_length(ACCEPTANCE, 3) == pytest.approx(al)
    assert steady_rate_tok_s(config, 1, 3, ACCEPTANCE) == pytest.approx(rate)
    assert joules_per_output_token(config, 1, 3, ACCEPTANCE, ALL_GPUS) == pytest.approx(expected)
    assert expected == pytest.approx(2.6652, abs=1e-4)


def test_speculation_saves_energy_at_low_concurrency_and_costs_it_at_high() -> None:
    config = _config()

    def saving(concurrency: int) -> float:
        baseline = joules_per_output_token(config, concurrency, 0, ACCEPTANCE, ALL_GPUS)
        speculative = joules_per_output_token(config, concurrency, 3, ACCEPTANCE, ALL_GPUS)
        return baseline - speculative

    # c = 1: 8.05 → 2.665 J/token; c = 64: 0.3325 → 0.4406 (the verify cost past the knee)
    assert saving(1) == pytest.approx(5.3848, abs=1e-4)
    assert saving(64) == pytest.approx(-0.1081, abs=1e-4)
    assert energy_crossover(config, CONCURRENCIES, 3, ACCEPTANCE, ALL_GPUS) == 32
    assert saving(16) > 0 > saving(32)


def test_no_crossover_when_k_is_free() -> None:
    config = _config(draft_step_ms=0.0, verify_token_ms=0.0, compute_knee_tokens=0)
    assert energy_crossover(config, CONCURRENCIES, 3, ACCEPTANCE, ALL_GPUS) is None
