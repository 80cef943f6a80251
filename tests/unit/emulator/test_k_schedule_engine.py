"""The emulator honours a `num_speculative_tokens_per_batch_size` schedule (issue 40,
requirement 2): K from each step's request count, verified at the next step; K = 0 verifies
nothing but pays one draft step; the counters stay vLLM's; the truth prices a schedule."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from specbench.common.errors import SpecbenchError
from specbench.emulator.config import make_emulator_config
from specbench.emulator.engine import Engine
from specbench.emulator.metrics import EmulatorMetrics
from specbench.emulator.request import EngineRequest
from specbench.emulator.truth import schedule_rate_tok_s, steady_rate_tok_s
from specbench.launch.argv import build_argv
from specbench.launch.config import ServerConfig
from specbench.suite.load import load_suite

#: Batch 1 → K 4, batches 2-3 → K 2, batch 4 and up → K 0.
SCHEDULE = ((1, 1, 4), (2, 3, 2), (4, 8, 0))


def _request(key: int, k_max: int = 4) -> EngineRequest:
    return EngineRequest(
        num_prompt_tokens=10,
        max_tokens=1000,
        arrival_s=0.0,
        stream_key=key,
        rng=random.Random(key),
        corrupt_from=None,
        histogram=[0] * (k_max + 1),
    )


def _counters(metrics: EmulatorMetrics) -> dict[str, float]:
    text = metrics.exposition().decode()
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("vllm:spec_decode") and sample.name.endswith("_total"):
                position = sample.labels.get("position")
                key = sample.name if position is None else f"{sample.name}[{position}]"
                found[key] = sample.value
    return found


def test_each_step_verifies_the_k_its_previous_step_chose_from_its_request_count() -> None:
    config = make_emulator_config(
        port=1,
        prefill_ms=20.0,
        step_ms=10.0,
        per_request_step_ms=0.0,
        draft_step_ms=1.0,
        num_speculative_tokens=4,
        acceptance=(1.0, 1.0, 1.0, 1.0),
        per_step_spec_metrics=True,
        num_speculative_tokens_per_batch_size=SCHEDULE,
    )

    async def steps() -> tuple[list[tuple[int, float, int, int]], dict[str, float], list[int]]:
        metrics = EmulatorMetrics(config)
        engine = Engine(config, metrics)
        first, second, third, fourth = (_request(key) for key in range(4))
        plans = [
            ([first], []),  # batch 1: prefill only, verifies nothing; chooses K 4
            ([second], [first]),  # verifies 4; batch 2 chooses K 2
            ([third, fourth], [first, second]),  # verifies 2; batch 4 chooses K 0
            ([], [first, second, third, fourth]),  # verifies 0; batch 4 chooses K 0
            ([], [first]),  # verifies 0 (chosen at batch 4); batch 1 chooses K 4
            ([], [first]),  # verifies 4
        ]
        seen = []
        for admitted, decoding in plans:
            step = engine._plan(admitted, decoding)
            engine._deliver(step, 0.0)
            seen.append((step.k, step.duration_s * 1000, step.num_drafts, step.num_draft_tokens))
        return seen, _counters(metrics), first.per_step_drafted

    seen, counters, drafted = asyncio.run(steps())
    assert [k for k, _, _, _ in seen] == [0, 4, 2, 0, 0, 4]
    # Durations: a prefill step 20 ms, a decode step 10 ms, + draft_step_ms per draft; a
    # decode step at K = 0 still pays one draft step (the drafter runs).
    assert [duration for _, duration, _, _ in seen] == pytest.approx([20, 24, 22, 11, 11, 14])
    assert [(drafts, tokens) for _, _, drafts, tokens in seen] == [
        (0, 0), (1, 4), (2, 4), (0, 0), (0, 0), (1, 4),
    ]  # fmt: skip
    # The first request's verify steps: K 4, 2, then 4 again; its K = 0 steps are not listed.
    assert drafted == [4, 2, 4]
    # /metrics counts only what was drafted; acceptance 1: every drafted position accepted.
    # The per-position counter keeps the maximum's 4 positions; those past K do not grow.
    assert counters == {
        "vllm:spec_decode_num_drafts_total": 4.0,
        "vllm:spec_decode_num_draft_tokens_total": 12.0,
        "vllm:spec_decode_num_accepted_tokens_total": 12.0,
        "vllm:spec_decode_num_accepted_tokens_per_pos_total[0]": 4.0,
        "vllm:spec_decode_num_accepted_tokens_per_pos_total[1]": 4.0,
        "vllm:spec_decode_num_accepted_tokens_per_pos_total[2]": 2.0,
        "vllm:spec_decode_num_accepted_tokens_per_pos_total[3]": 2.0,
    }


def test_acceptance_draws_only_the_first_k_positions() -> None:
    # Position 3 would always be rejected; under a schedule at K 2 it is never drafted, so
    # a request gives 3 tokens per step exactly as a fixed K = 2 server would.
    config = make_emulator_config(
        port=1,
        num_speculative_tokens=3,
        acceptance=(1.0, 1.0, 0.0),
        num_speculative_tokens_per_batch_size=((1, 8, 2),),
    )

    async def generated() -> tuple[int, list[int]]:
        engine = Engine(config, EmulatorMetrics(config))
        request = _request(7, k_max=3)
        engine._plan([request], [])
        for _ in range(5):
            engine._plan([], [request])
        return request.num_generated, request.histogram

    assert asyncio.run(generated()) == (1 + 5 * 3, [0, 0, 5, 0])


def test_without_a_schedule_every_verify_step_drafts_the_maximum() -> None:
    config = make_emulator_config(port=1, num_speculative_tokens=3, acceptance=(1.0, 1.0, 1.0))

    async def ks() -> list[int]:
        engine = Engine(config, EmulatorMetrics(config))
        requests = [_request(key, k_max=3) for key in range(20)]
        engine._plan(requests, [])
        return [engine._plan([], requests[:n]).k for n in (1, 20, 5)]

    assert asyncio.run(ks()) == [3, 3, 3]


def test_the_truth_prices_a_schedule_against_the_best_fixed_k() -> None:
    acceptance = (0.9, 0.85, 0.8, 0.75, 0.7)
    config = make_emulator_config(
        port=1,
        step_ms=10.0,
        per_request_step_ms=0.2,
        draft_step_ms=0.2,
        verify_token_ms=0.3,
        compute_knee_tokens=16,
        num_speculative_tokens=5,
        acceptance=acceptance,
    )
    schedule = ((1, 4, 5), (5, 16, 3), (17, 1024, 0))
    for concurrency, k in ((1, 5), (4, 5), (16, 3)):
        assert schedule_rate_tok_s(config, concurrency, schedule, acceptance) == pytest.approx(
            steady_rate_tok_s(config, concurrency, k, acceptance)
        )
    # At c = 64 the schedule's K = 0 is not the baseline: 64 tokens per 10 + 0.2·63 + 0.2 ms.
    assert schedule_rate_tok_s(config, 64, schedule, acceptance) == pytest.approx(64 / 22.8 * 1000)
    assert steady_rate_tok_s(config, 64, 0, acceptance) == pytest.approx(64 / 22.6 * 1000)
    # A K above the maximum is clamped, as vLLM clamps it: K 9 runs as K 5.
    assert schedule_rate_tok_s(config, 2, ((1, 8, 9),), acceptance) == pytest.approx(
        steady_rate_tok_s(config, 2, 5, acceptance)
    )


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        (((2, 4, 3),), "the first range [2, 4, 3] must start at 1"),
        (((1, 4, 3), (4, 8, 1)), "range [4, 8, 1] overlaps [1, 4, 3]"),
        (((1, 4, 3), (9, 5, 1)), "range [9, 5, 1]: start is after end"),
        (((1, 4, -2),), "range [1, 4, -2]: K must be 0 or more"),
    ],
)
def test_the_config_refuses_a_schedule_that_breaks_a_rule(
    schedule: tuple[tuple[int, int, int], ...], message: str
) -> None:
    with pytest.raises(SpecbenchError) as caught:
        make_emulator_config(port=1, num_speculative_tokens_per_batch_size=schedule)
    assert str(caught.value) == (
        f"emulator options: --num-speculative-tokens-per-batch-size: {message}"
    )


SUITE = """
name = "schedule"
[target]
model = "m"
engine = "emulator"
[servers.base]
baseline = true
[servers.eagle3]
speculative = {{ method = "eagle3", model = "d", num_speculative_tokens = 4 }}
emulator = {{ num_speculative_tokens_per_batch_size = {schedule} }}
[[workloads]]
dataset = "mt-bench"
concurrency = [1]
max_tokens = 8
"""


def test_a_suite_sets_a_schedule_and_the_emulator_gets_it_as_json(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(schedule="[[1, 4, 4], [5, 64, 1]]"))
    server = load_suite(path).servers["eagle3"]
    argv = build_argv(server)
    flag = argv.index("--num-speculative-tokens-per-batch-size")
    assert argv[flag + 1] == "[[1,4,4],[5,64,1]]"
    # None (the default) writes no flag: today's servers are unchanged.
    assert "--num-speculative-tokens-per-batch-size" not in build_argv(
        ServerConfig(engine="emulator", model="m")
    )


def test_a_suite_with_a_bad_schedule_is_refused_at_load_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(schedule="[[1, 4, 4], [3, 64, 1]]"))
    with pytest.raises(SpecbenchError) as caught:
        load_suite(path)
    assert str(caught.value) == (
        f"{path}: servers.eagle3.emulator.num_speculative_tokens_per_batch_size: "
        "range [3, 64, 1] overlaps [1, 4, 4]"
    )
