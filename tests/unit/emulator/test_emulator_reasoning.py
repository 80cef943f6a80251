"""Emulator reasoning mode, position-decaying acceptance and vLLM's `detailed` per-step arrays."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from emulator_helpers import parse_sse, post
from harness import in_process_emulator

from specbench.common.errors import SpecbenchError
from specbench.emulator import make_emulator_config
from specbench.emulator.acceptance import (
    acceptance_length_of,
    expected_acceptance_length_between,
    expected_step_acceptance_length,
    is_exact_between,
    schedule_pieces,
    step_acceptance,
)
from specbench.emulator.reasoning import chat_delta, reasoning_token_count
from specbench.emulator.tokens import THINK_END_TOKEN_ID, THINK_START_TOKEN_ID

CHAT = "/v1/chat/completions"


def _chat_body(max_tokens: int, stream: bool = True, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": "Explain the tides step by step"}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": stream,
        **extra,
    }
    if stream:
        body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
    return body


def test_schedule_and_truth_by_hand() -> None:
    config = make_emulator_config(
        acceptance=(0.8, 0.75, 0.7),
        reasoning_tokens=100,
        reasoning_acceptance=(0.5, 0.5, 0.5),
        acceptance_decay=0.5,
        acceptance_decay_tokens=256,
    )
    assert acceptance_length_of((0.8, 0.75, 0.7)) == pytest.approx(1 + 0.8 + 0.6 + 0.42)
    assert expected_step_acceptance_length(config, 99) == pytest.approx(1.875)
    assert expected_step_acceptance_length(config, 100) == pytest.approx(2.82)
    # At 300 the answer's probabilities are halved once: 0.4, 0.375, 0.35.
    assert step_acceptance(config, 300) == pytest.approx((0.4, 0.375, 0.35))
    assert expected_step_acceptance_length(config, 300) == pytest.approx(1.6025)
    assert schedule_pieces(config, 0, 512) == [(0, 100), (100, 256), (256, 512)]
    assert is_exact_between(config, 256, 512)
    assert expected_acceptance_length_between(config, 256, 512) == pytest.approx(1.6025)
    assert not is_exact_between(config, 0, 256)
    # Renewal mix of two pieces: 256 tokens / (100/1.875 + 156/2.82) steps.
    assert expected_acceptance_length_between(config, 0, 256) == pytest.approx(
        256 / (100 / 1.875 + 156 / 2.82)
    )


def test_reasoning_options_are_checked_at_start_up() -> None:
    with pytest.raises(SpecbenchError, match="reasoning-acceptance has 2 values"):
        make_emulator_config(reasoning_acceptance=(0.5, 0.5))
    with pytest.raises(SpecbenchError, match="reasoning-tokens 1 cannot hold"):
        make_emulator_config(reasoning_tokens=1)
    with pytest.raises(SpecbenchError, match="acceptance_decay"):
        make_emulator_config(acceptance_decay=0.0)


def test_chat_delta_follows_vllms_think_parser() -> None:
    # Span of 10 tokens: <think> at 0, </think> at 9, answer from 10.
    assert chat_delta([THINK_START_TOKEN_ID], 0, 10, "reasoning") is None
    assert chat_delta([THINK_END_TOKEN_ID], 9, 10, "reasoning") is None
    assert chat_delta([THINK_START_TOKEN_ID, 5, 6], 0, 10, "reasoning") == {
        "reasoning": " tok5 tok6"
    }
    assert chat_delta([7, THINK_END_TOKEN_ID, 8], 8, 10, "reasoning_content") == {
        "content": " tok8",
        "reasoning_content": " tok7",
    }
    assert chat_delta([7, THINK_END_TOKEN_ID], 8, 10, "reasoning") == {
        "content": None,
        "reasoning": " tok7",
    }
    assert chat_delta([8, 9], 10, 10, "reasoning") == {"content": " tok8 tok9"}
    assert chat_delta([THINK_START_TOKEN_ID, 5], 0, 10, "inline") == {"content": "<think> tok5"}
    assert [reasoning_token_count(n, 10) for n in (0, 1, 2, 9, 10, 40)] == [0, 0, 1, 8, 8, 8]


async def test_detailed_stream_carries_per_step_arrays_and_reasoning_deltas() -> None:
    config = make_emulator_config(
        reasoning_tokens=10, per_step_spec_metrics=True, prefill_ms=0, step_ms=0
    )
    async with in_process_emulator(config) as (base, session):
        status, raw = await post(session, base, CHAT, _chat_body(40, return_token_ids=True))
    assert status == 200
    events = parse_sse(raw)
    assert events[-1] == "[DONE]"
    final = events[-2]
    assert final["choices"] == []
    assert final["usage"]["completion_tokens"] == 40
    assert final["usage"]["completion_tokens_details"] == {"reasoning_tokens": 8}
    spec = final["metrics"]["speculative_decoding"]
    assert list(spec)[-2:] == ["per_step_accepted", "per_step_drafted"]
    per_step = spec["per_step_accepted"]
    assert len(per_step) == spec["num_spec_steps"] == sum(spec["acceptance_histogram"])
    assert sum(per_step) == spec["num_accepted_draft_tokens"]
    assert spec["per_step_drafted"] == [3] * len(per_step)
    # Every content chunk is one step: usage deltas are 1 (prefill), then accepted + 1,
    # the last one cut by max_tokens.
    chunks = [event for event in events[1:-2] if event["choices"]]
    sizes = [len(event["choices"][0]["token_ids"]) for event in chunks]
    assert sizes[0] == 1 and len(sizes) == len(per_step) + 1
    assert sizes[1:-1] == [accepted + 1 for accepted in per_step[:-1]]
    assert 1 <= sizes[-1] <= per_step[-1] + 1 and sum(sizes) == 40
    deltas = [event["choices"][0]["delta"] for event in chunks]
    reasoning = "".join(delta.get("reasoning") or "" for delta in deltas)
    content = "".join(delta.get("content") or "" for delta in deltas)
    assert reasoning.count(" tok") == 8 and content.count(" tok") == 30
    assert "<think>" not in reasoning + content
    assert all("reasoning_content" not in delta for delta in deltas)


async def test_summary_level_and_non_streamed_shapes() -> None:
    summary = make_emulator_config(prefill_ms=0, step_ms=0)
    detailed = make_emulator_config(
        prefill_ms=0, step_ms=0, per_step_spec_metrics=True, reasoning_tokens=6
    )
    async with in_process_emulator(summary) as (base, session):
        _, raw = await post(session, base, CHAT, _chat_body(20))
        _, body = await post(session, base, CHAT, _chat_body(20, stream=False))
    spec = parse_sse(raw)[-2]["metrics"]["speculative_decoding"]
    assert "per_step_accepted" not in spec and "per_step_drafted" not in spec
    full = orjson.loads(body)["metrics"]["speculative_decoding"]
    assert full["per_step_accepted"] is None and full["per_step_drafted"] is None
    async with in_process_emulator(detailed) as (base, session):
        _, body = await post(session, base, CHAT, _chat_body(20, stream=False))
    response = orjson.loads(body)
    full = response["metrics"]["speculative_decoding"]
    assert len(full["per_step_accepted"]) == full["num_spec_steps"] > 0
    message = response["choices"][0]["message"]
    assert message["reasoning"].count(" tok") == 4 and message["content"].count(" tok") == 14
    assert response["usage"]["completion_tokens_details"] == {"reasoning_tokens": 4}


async def test_inline_reasoning_wraps_the_span_in_think_tags() -> None:
    config = make_emulator_config(
        reasoning_tokens=12, reasoning_output="inline", prefill_ms=0, step_ms=0
    )
    async with in_process_emulator(config) as (base, session):
        _, raw = await post(session, base, CHAT, _chat_body(30))
    events = parse_sse(raw)
    content = "".join(
        event["choices"][0]["delta"].get("content") or ""
        for event in events[:-1]
        if isinstance(event, dict) and event["choices"]
    )
    assert content.startswith("<think> tok")
    thinking, answer = content.removeprefix("<think>").split("</think>")
    assert thinking.count(" tok") == 10 and answer.count(" tok") == 18
    assert "completion_tokens_details" not in events[-2]["usage"]
