"""Acceptance cuts against a real emulator process with known thinking/answer acceptance and decay.

Each server is `specbench emulate` started by the launcher from a suite-style config; the
client streams chat requests as specbench does (continuous usage, token ids), finds the
answer start from the deltas, and computes the cuts of `metrics/cuts.py` from vLLM's
`detailed` per-step arrays. Every cut must land within 1% of the emulator's configured
truth (`emulator/acceptance.py`). Sample sizes are chosen so 1% is at least ~3.5 standard
errors of each cut's mean; the seed is fixed, so the figures are reproducible.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from specbench.client.sse import SSEDecoder
from specbench.emulator import make_emulator_config
from specbench.emulator.acceptance import (
    expected_acceptance_length_between,
    is_exact_between,
)
from specbench.launch import EmulatorOverrides, ServerConfig, ServerProcess, SpeculativeConfig
from specbench.metrics.cuts import (
    SpanSplit,
    StepAlignment,
    acceptance_length_by_position,
    acceptance_length_by_span,
    align_chunks_estimate,
    align_request,
)

K = 3
#: Both tests: the per-step arrays (exact alignment) and no step clock (the tests read
#: counts, not times).
EXACT_AND_UNTIMED: dict[str, Any] = {
    "per_step_spec_metrics": True,
    "prefill_ms": 0.0,
    "step_ms": 0.0,
    "per_request_step_ms": 0.0,
}


@dataclass
class StreamedAnswer:
    chunk_tokens: list[int]
    answer_start: int | None
    output_tokens: int
    spec: dict[str, Any]


def _is_answer_chunk(delta: dict[str, Any], seen_end_tag: bool, inline: bool) -> bool:
    """A chunk all of whose tokens follow `</think>` (the client rule to hand the sender)."""
    content = delta.get("content")
    if not content:
        return False
    if inline:
        return seen_end_tag
    return delta.get("reasoning") is None and delta.get("reasoning_content") is None


async def _stream(
    session: aiohttp.ClientSession, base: str, model: str, index: int, max_tokens: int, inline: bool
) -> StreamedAnswer:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": f"Question {index}: reason about item {index}"}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        "return_token_ids": True,
    }
    decoder = SSEDecoder()
    chunk_tokens: list[int] = []
    answer_start: int | None = None
    seen_end_tag = False
    completion = 0
    spec: dict[str, Any] = {}
    async with session.post(f"{base}/v1/chat/completions", json=body) as response:
        assert response.status == 200
        async for data in response.content.iter_any():
            for event in decoder.feed(data):
                if event == b"[DONE]":
                    continue
                chunk = orjson.loads(event)
                usage = chunk["usage"]
                if chunk["choices"]:
                    tokens = usage["completion_tokens"] - completion
                    completion = usage["completion_tokens"]
                    if tokens == 0:
                        continue
                    delta = chunk["choices"][0]["delta"]
                    if answer_start is None and _is_answer_chunk(delta, seen_end_tag, inline):
                        answer_start = completion - tokens
                    seen_end_tag = seen_end_tag or "</think>" in (delta.get("content") or "")
                    chunk_tokens.append(tokens)
                elif "metrics" in chunk:
                    spec = chunk["metrics"]["speculative_decoding"]
    return StreamedAnswer(chunk_tokens, answer_start, completion, spec)


async def _run(base: str, model: str, requests: int, max_tokens: int, inline: bool):
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        semaphore = asyncio.Semaphore(32)

        async def one(index: int) -> StreamedAnswer:
            async with semaphore:
                return await _stream(session, base, model, index, max_tokens, inline)

        return await asyncio.gather(*(one(index) for index in range(requests)))


def _serve_and_stream(
    tmp_path: Path, settings: EmulatorOverrides, requests: int, max_tokens: int
) -> list[StreamedAnswer]:
    config = ServerConfig(
        engine="emulator",
        model="emu-reasoner",
        max_model_len=max_tokens + 64,
        speculative=SpeculativeConfig(method="eagle3", model="emu-draft", num_speculative_tokens=K),
        emulator=settings,
    )
    inline = settings.reasoning_output == "inline"
    with ServerProcess(config, name="reasoner", log_dir=tmp_path) as server:
        assert "detailed" in server.argv
        return asyncio.run(_run(server.base_url, "emu-reasoner", requests, max_tokens, inline))


def _truth_config(settings: EmulatorOverrides):
    return make_emulator_config(
        acceptance=tuple(settings.acceptance or ()),
        reasoning_acceptance=tuple(settings.reasoning_acceptance or ()),
        reasoning_tokens=settings.reasoning_tokens or 0,
        acceptance_decay=settings.acceptance_decay or 1.0,
        acceptance_decay_tokens=settings.acceptance_decay_tokens or 256,
    )


def _alignments(answers: list[StreamedAnswer]) -> list[StepAlignment]:
    alignments = []
    for answer in answers:
        alignment = align_request(
            answer.spec["per_step_accepted"], answer.chunk_tokens, answer.output_tokens, K
        )
        assert isinstance(alignment, StepAlignment), alignment
        assert alignment.exact
        alignments.append(alignment)
    return alignments


def _within(measured: float | None, truth: float) -> float:
    assert measured is not None
    error = measured / truth - 1.0
    assert abs(error) < 0.01
    return error


@pytest.mark.parametrize("reasoning_output", ["reasoning", "reasoning_content"])
def test_thinking_vs_answer_within_one_percent(tmp_path: Path, reasoning_output: str) -> None:
    settings = EmulatorOverrides(
        acceptance=[0.8, 0.75, 0.7],
        reasoning_acceptance=[0.5, 0.45, 0.4],
        reasoning_tokens=400,
        reasoning_output=reasoning_output,
        **EXACT_AND_UNTIMED,
        seed=18,
    )
    answers = _serve_and_stream(tmp_path, settings, requests=160, max_tokens=800)
    truth = _truth_config(settings)
    assert all(answer.answer_start is not None for answer in answers)
    # The first answer chunk starts at the first step starting past </think> (position 399).
    assert all(399 < (answer.answer_start or 0) <= 400 + K for answer in answers)
    alignments = _alignments(answers)
    split = acceptance_length_by_span(
        zip(alignments, [answer.answer_start for answer in answers], strict=True)
    )
    assert isinstance(split, SpanSplit) and split.num_requests_with_span == 160
    assert is_exact_between(truth, 0, 400) and is_exact_between(truth, 400, 800)
    _within(split.thinking.acceptance_length, expected_acceptance_length_between(truth, 0, 400))
    _within(split.answer.acceptance_length, expected_acceptance_length_between(truth, 400, 800))
    # Every step accounted: the split pools exactly the per-request counters.
    assert split.thinking.num_steps + split.answer.num_steps == sum(
        answer.spec["num_spec_steps"] for answer in answers
    )
    # This server never coalesces, so the chunk estimate places the same steps.
    estimates = [align_chunks_estimate(answer.chunk_tokens, K) for answer in answers]
    assert all(isinstance(estimate, StepAlignment) for estimate in estimates)
    assert [estimate.start_positions for estimate in estimates] == [  # type: ignore[union-attr]
        alignment.start_positions for alignment in alignments
    ]


def test_position_bins_with_decay_and_inline_thinking_within_one_percent(tmp_path: Path) -> None:
    settings = EmulatorOverrides(
        acceptance=[0.9, 0.85, 0.8],
        reasoning_acceptance=[0.6, 0.55, 0.5],
        reasoning_tokens=256,
        reasoning_output="inline",
        acceptance_decay=0.8,
        acceptance_decay_tokens=256,
        **EXACT_AND_UNTIMED,
        seed=7,
    )
    answers = _serve_and_stream(tmp_path, settings, requests=200, max_tokens=1024)
    truth = _truth_config(settings)
    alignments = _alignments(answers)
    bins = acceptance_length_by_position(alignments, max_tokens=1024, bin_tokens=256)
    assert [(b.start, b.end) for b in bins] == [(0, 256), (256, 512), (512, 768), (768, 1024)]
    for position_bin in bins:
        assert is_exact_between(truth, position_bin.start, position_bin.end)
        _within(
            position_bin.steps.acceptance_length,
            expected_acceptance_length_between(truth, position_bin.start, position_bin.end),
        )
    split = acceptance_length_by_span(
        zip(alignments, [answer.answer_start for answer in answers], strict=True)
    )
    assert isinstance(split, SpanSplit)
    _within(split.thinking.acceptance_length, expected_acceptance_length_between(truth, 0, 256))
    # The answer spans three decay pieces: its truth is the renewal mix (module docstring).
    _within(split.answer.acceptance_length, expected_acceptance_length_between(truth, 256, 1024))
