"""The emulator prices K (issue 40, requirement 2): a step's drafting and its verified
tokens beyond the compute knee cost time, so the best K falls as concurrency rises, and
`emulator.truth` gives that best K from the time model alone."""

from __future__ import annotations

import asyncio
import random

import pytest

from specbench.common.emulator_settings import OPTIONS
from specbench.emulator.config import make_emulator_config
from specbench.emulator.engine import Engine, step_cost_ms
from specbench.emulator.metrics import EmulatorMetrics
from specbench.emulator.request import EngineRequest
from specbench.emulator.truth import best_k, expected_acceptance_length, steady_rate_tok_s
from specbench.launch.argv import build_argv
from specbench.launch.config import ServerConfig

ACCEPTANCE = (0.9, 0.85, 0.8, 0.75, 0.7, 0.65)


def _config(**priced: float) -> object:
    return make_emulator_config(
        port=1,
        step_ms=10.0,
        per_request_step_ms=0.2,
        num_speculative_tokens=6,
        acceptance=ACCEPTANCE,
        **priced,
    )


def test_a_step_pays_for_its_drafts_and_the_tokens_past_the_knee() -> None:
    config = _config(draft_step_ms=1.5, verify_token_ms=0.05, compute_knee_tokens=8)
    # 3 decoding requests at K = 4: 10 + 0.2·2 + 1.5·4 + 0.05·(3·5 − 8)
    assert step_cost_ms(config, 0, 3, 4) == pytest.approx(16.75)
    # Below the knee only the drafts cost: 10 + 1.5·4 (1 × 5 tokens ≤ 8)
    assert step_cost_ms(config, 0, 1, 4) == pytest.approx(16.0)
    # A prefill-only step drafts nothing: prefill_ms (20 by default)
    assert step_cost_ms(config, 1, 0, 4) == pytest.approx(20.0)
    # K = 0 (the baseline) pays neither: 10 + 0.2·63
    assert step_cost_ms(config, 0, 64, 0) == pytest.approx(22.6)
    # Unpriced (the defaults, 0): today's time model, whatever K
    assert step_cost_ms(_config(), 0, 3, 6) == pytest.approx(10.4)


def test_the_engine_plans_each_step_at_that_price() -> None:
    config = make_emulator_config(
        port=1,
        step_ms=10.0,
        per_request_step_ms=0.2,
        draft_step_ms=1.5,
        verify_token_ms=0.05,
        compute_knee_tokens=8,
        num_speculative_tokens=4,
        acceptance=ACCEPTANCE[:4],
    )

    async def planned() -> float:
        engine = Engine(config, EmulatorMetrics(config))
        requests = [
            EngineRequest(
                num_prompt_tokens=10,
                max_tokens=100,
                arrival_s=0.0,
                stream_key=i,
                rng=random.Random(i),
                corrupt_from=None,
                histogram=[0] * 5,
                num_generated=1,
            )
            for i in range(3)
        ]
        return engine._plan([], requests).duration_s

    assert asyncio.run(planned()) == pytest.approx(16.75 / 1000)


def test_the_truth_puts_the_best_k_high_at_c1_and_at_the_baseline_at_c64() -> None:
    assert expected_acceptance_length(ACCEPTANCE, 0) == 1.0
    assert expected_acceptance_length(ACCEPTANCE, 2) == pytest.approx(1 + 0.9 + 0.9 * 0.85)
    config = _config(draft_step_ms=0.2, verify_token_ms=0.3, compute_knee_tokens=16)
    # c = 1, K = 6: 1 × AL(6) / (10 + 0.2·6) tokens per ms
    assert steady_rate_tok_s(config, 1, 6, ACCEPTANCE) == pytest.approx(
        expected_acceptance_length(ACCEPTANCE, 6) / 11.2 * 1000
    )
    found = {c: best_k(config, c, range(7), ACCEPTANCE) for c in (1, 4, 16, 64)}
    assert {c: b.best for c, b in found.items()} == {1: 6, 4: 4, 16: 3, 64: 0}
    # At c = 64 every draft is verified past the knee: the baseline wins by 25.9%.
    assert found[64].margin == pytest.approx(0.259, abs=0.001)
    with pytest.raises(ValueError, match="K = 7 needs 7 acceptance values"):
        best_k(config, 1, [7], ACCEPTANCE)


def test_a_suite_sets_the_prices_and_the_emulator_takes_them_as_flags() -> None:
    assert {"draft_step_ms", "verify_token_ms", "compute_knee_tokens"} <= {o.name for o in OPTIONS}
    server = ServerConfig(
        engine="emulator",
        model="emu",
        emulator={"draft_step_ms": 0.2, "verify_token_ms": 0.3, "compute_knee_tokens": 16},
    )
    argv = build_argv(server, per_request_timing=True)
    for flag, value in (
        ("--draft-step-ms", "0.2"),
        ("--verify-token-ms", "0.3"),
        ("--compute-knee-tokens", "16"),
    ):
        assert argv[argv.index(flag) + 1] == value
    unpriced = build_argv(ServerConfig(engine="emulator", model="emu"), per_request_timing=True)
    assert "--draft-step-ms" not in unpriced
