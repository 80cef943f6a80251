"""The stream accumulator keeps thinking apart and finds where the answer starts.

Real streams from the in-process emulator (vLLM 0.32's deltas: `reasoning`, the older
`reasoning_content`, or inline `<think>` tags), and hand-written chunk sequences for the
cases the emulator does not produce (a template that opens `<think>` in the prompt, a tag
split across chunks, a span cut by max_tokens, no span at all).
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from specbench.client.record import RequestRecord
from specbench.client.sender import AiohttpSender, RequestSettings
from specbench.client.stream import StreamAccumulator
from specbench.emulator import build_app, make_emulator_config

K = 3
THINKING = 60


async def _stream(reasoning_output: str, max_tokens: int, return_token_ids: bool = True):
    config = make_emulator_config(
        prefill_ms=0.0, step_ms=0.0, per_request_step_ms=0.0, num_speculative_tokens=K,
        acceptance=(0.7, 0.6, 0.5), reasoning_tokens=THINKING,
        reasoning_output=reasoning_output, per_step_spec_metrics=True, seed=3,
    )  # fmt: skip
    server = TestServer(build_app(config))
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            base = str(server.make_url("")).rstrip("/")
            settings = RequestSettings(
                model="specbench-emulator", max_tokens=max_tokens, return_token_ids=return_token_ids
            )
            record = RequestRecord(question_id="q", turn=0, num_turns=1, category="c")
            await AiohttpSender(session, base, settings).send(
                [{"role": "user", "content": "think first"}], record
            )
            return record
    finally:
        await server.close()


def _step_starts(record: RequestRecord) -> list[int]:
    starts, position = [], 0
    for tokens in record.chunk_tokens:
        starts.append(position)
        position += tokens
    return starts


@pytest.mark.parametrize("reasoning_output", ["reasoning", "reasoning_content", "inline"])
async def test_answer_starts_at_the_first_chunk_after_the_closing_marker(
    reasoning_output: str,
) -> None:
    record = await _stream(reasoning_output, max_tokens=200)
    assert record.ok and record.output_tokens == 200
    start = record.answer_start_token
    # </think> is output position THINKING - 1; the chunk holding it is still thinking, the
    # next chunk (a step of at most K + 1 tokens) opens the answer.
    assert start is not None and THINKING - 1 < start <= THINKING + K
    assert start in _step_starts(record)
    assert record.thinking_tokens == start and record.answer_tokens == 200 - start
    # The per-step arrays of vLLM's `detailed` level are kept verbatim in the record.
    assert record.spec_decode is not None
    assert (
        sum(record.spec_decode["per_step_accepted"])
        + len(record.spec_decode["per_step_accepted"])
        + 1
        >= 200
    )
    if reasoning_output == "inline":
        assert record.reasoning_source == "think_tags" and record.reasoning_text is None
        assert record.output_text is not None and record.output_text.startswith("<think>")
    else:
        assert record.reasoning_source == reasoning_output
        assert record.reasoning_text and "<think>" not in record.reasoning_text
        assert record.output_text and "</think>" not in record.output_text


async def test_a_span_cut_by_max_tokens_is_all_thinking() -> None:
    record = await _stream("reasoning", max_tokens=40)
    assert record.ok and record.output_tokens == 40
    assert record.reasoning_source == "reasoning"
    assert record.answer_start_token == 40 and record.answer_tokens == 0


async def test_reasoning_chunks_count_without_usage_or_token_ids() -> None:
    # No continuous usage and no token ids: 1 token per chunk with text, reasoning included.
    config_record = await _stream("reasoning", max_tokens=200, return_token_ids=False)
    assert config_record.ok
    assert config_record.answer_start_token is not None


def _feed(deltas: list[dict[str, Any]], tokens_per_chunk: int = 2) -> RequestRecord:
    record = RequestRecord(question_id="q", turn=0, num_turns=1, category="c")
    accumulator = StreamAccumulator(record, chat=True)
    total = 0
    for index, delta in enumerate(deltas):
        total += tokens_per_chunk
        chunk = {"choices": [{"delta": delta}], "usage": {"completion_tokens": total}}
        assert accumulator.add(chunk, 1000 * (index + 1))
    accumulator.finish(complete=True, unfinished="[DONE]")
    return record


def test_a_closing_tag_without_an_opening_one_marks_the_span() -> None:
    # DeepSeek-R1-style templates put "<think>\n" in the prompt: the output only closes it.
    record = _feed([{"content": "let me"}, {"content": " see</think>"}, {"content": "Answer"}])
    assert record.reasoning_source == "think_tags"
    assert record.answer_start_token == 4


def test_a_tag_split_across_chunks_is_found() -> None:
    record = _feed(
        [{"content": "<think>hm"}, {"content": "m</th"}, {"content": "ink>"}, {"content": "Yes"}]
    )
    assert record.answer_start_token == 6


def test_no_span_is_not_invented() -> None:
    record = _feed([{"content": "plain"}, {"content": " answer"}])
    assert record.reasoning_source is None
    assert record.answer_start_token is None and record.thinking_tokens is None
    assert record.answer_tokens is None
