"""Acceptance cuts (metrics/cuts.py) on hand-computed alignments and a real vLLM stream."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from specbench.client.sse import SSEDecoder
from specbench.metrics.cuts import (
    Refusal,
    SpanSplit,
    StepAlignment,
    acceptance_length_by_position,
    acceptance_length_by_span,
    align_chunks_estimate,
    align_per_step,
    align_per_step_with_chunks,
    align_request,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm"


def test_per_step_alignment_places_each_step_after_the_prefill_token():
    # Steps emit 1, 3, 2, 4 tokens after the prefill token 0: starts 1, 2, 5, 7; the last
    # step's 4 tokens (7..10) are cut to 7..9 by a 10-token cap, still one step.
    alignment = align_per_step([0, 2, 1, 3], output_tokens=10)
    assert alignment == StepAlignment((1, 2, 5, 7), (0, 2, 1, 3), exact=True)


def test_per_step_alignment_refuses_arrays_that_do_not_cover_the_output():
    short = align_per_step([1, 1], output_tokens=10)
    assert isinstance(short, Refusal)
    assert "accounts for 5 of 10 output tokens" in short.reason
    long = align_per_step([3, 3, 3], output_tokens=4)
    assert isinstance(long, Refusal)
    assert "step at token 9" in long.reason
    assert align_per_step([], output_tokens=1) == StepAlignment((), (), exact=True)
    assert isinstance(align_per_step([], output_tokens=5), Refusal)
    with pytest.raises(ValueError, match="negative"):
        align_per_step([1, -1], output_tokens=4)


def test_chunk_estimate_takes_each_later_chunk_as_one_step():
    alignment = align_chunks_estimate([1, 1, 3, 2, 4, 2], num_spec_tokens=3)
    assert alignment == StepAlignment((1, 2, 5, 7, 11), (0, 2, 1, 3, 1), exact=False)


def test_chunk_estimate_refuses_coalesced_streams():
    coalesced = align_chunks_estimate([1, 5, 2], num_spec_tokens=3)
    assert isinstance(coalesced, Refusal)
    assert "chunk 1 (from token 1) carries 5 tokens, more than K + 1 = 4" in coalesced.reason
    merged_prefill = align_chunks_estimate([2, 1], num_spec_tokens=3)
    assert isinstance(merged_prefill, Refusal)
    assert "first chunk carries 2 tokens" in merged_prefill.reason


def test_per_step_arrays_align_through_chunks_when_a_step_had_no_draft():
    # An n-gram-like request: steps 0, 1, 2 accepted 0, 2, 0; a last decode step found no
    # draft and emitted one token outside the arrays. Output 7 tokens; arrays cover 6.
    chunks = [1, 1, 3, 1, 1]
    assert isinstance(align_per_step([0, 2, 0], output_tokens=7), Refusal)
    through = align_per_step_with_chunks([0, 2, 0], chunks, num_spec_tokens=3)
    assert through == StepAlignment((1, 2, 5), (0, 2, 0), exact=True)
    assert align_request([0, 2, 0], chunks, output_tokens=7, num_spec_tokens=3) == through
    mismatch = align_per_step_with_chunks([2], [1, 2, 1], num_spec_tokens=3)
    assert isinstance(mismatch, Refusal)
    assert "disagree" in mismatch.reason
    leftover = align_per_step_with_chunks([0, 0], [1, 1], num_spec_tokens=3)
    assert isinstance(leftover, Refusal)
    assert "1 recorded steps have no streamed chunk" in leftover.reason


def test_align_request_without_arrays_is_the_labelled_estimate():
    alignment = align_request(None, [1, 4, 4], output_tokens=9, num_spec_tokens=3)
    assert alignment == StepAlignment((1, 5), (3, 3), exact=False)


def test_position_bins_pool_steps_by_their_first_token():
    first = align_per_step([0, 2, 1, 3], output_tokens=10)  # starts 1, 2, 5, 7
    second = align_per_step([2, 2, 0], output_tokens=8)  # starts 1, 4, 7
    assert isinstance(first, StepAlignment) and isinstance(second, StepAlignment)
    bins = acceptance_length_by_position([first, second], max_tokens=10, bin_tokens=4)
    assert [(b.start, b.end) for b in bins] == [(0, 4), (4, 8), (8, 10)]
    # [0, 4): steps at 1, 2 (first: 0, 2 accepted) and 1 (second: 2) → 1 + 4/3.
    assert bins[0].steps.num_steps == 3
    assert bins[0].steps.acceptance_length == pytest.approx(1 + 4 / 3)
    # [4, 8): 5, 7 (first: 1, 3) and 4, 7 (second: 2, 0) → 1 + 6/4 = 2.5.
    assert bins[1].steps.acceptance_length == pytest.approx(2.5)
    assert bins[2].steps.num_steps == 0 and bins[2].steps.acceptance_length is None
    assert all(b.steps.exact for b in bins)
    # Summed over the bins it is the pooled mean_acceptance_length: 1 + 10/7.
    steps = sum(b.steps.num_steps for b in bins)
    accepted = sum(b.steps.num_accepted for b in bins)
    assert 1 + accepted / steps == pytest.approx(1 + 10 / 7)


def test_position_bins_mark_an_estimate_and_reject_steps_past_the_cap():
    estimate = align_chunks_estimate([1, 2, 2], num_spec_tokens=3)
    assert isinstance(estimate, StepAlignment)
    (only,) = acceptance_length_by_position([estimate], max_tokens=5, bin_tokens=256)
    assert (only.start, only.end, only.steps.exact) == (0, 5, False)
    with pytest.raises(ValueError, match="past max_tokens"):
        acceptance_length_by_position([estimate], max_tokens=3)


def test_span_split_attributes_steps_by_start_and_never_invents_a_span():
    first = align_per_step([0, 2, 1, 3], output_tokens=10)  # starts 1, 2, 5, 7
    second = align_per_step([2, 2, 0], output_tokens=8)
    assert isinstance(first, StepAlignment) and isinstance(second, StepAlignment)
    split = acceptance_length_by_span([(first, 5), (second, None)])
    assert isinstance(split, SpanSplit)
    # Thinking: steps at 1, 2 (0 + 2 accepted) → 2.0; answer: 5, 7 (1 + 3) → 3.0.
    assert split.thinking.acceptance_length == pytest.approx(2.0)
    assert split.answer.acceptance_length == pytest.approx(3.0)
    assert (split.num_requests_with_span, split.num_requests_without_span) == (1, 1)
    no_span = acceptance_length_by_span([(second, None)])
    assert isinstance(no_span, Refusal)
    assert "no thinking span found in any of 1 requests" in no_span.reason
    all_answer = acceptance_length_by_span([(second, 0)])
    assert isinstance(all_answer, SpanSplit)
    assert all_answer.thinking.num_steps == 0 and all_answer.answer.num_steps == 3


def _stream_events(path: Path) -> list[dict[str, object]]:
    decoder = SSEDecoder()
    events = decoder.feed(path.read_bytes()) + decoder.flush()
    return [orjson.loads(event) for event in events if event != b"[DONE]"]


def test_real_vllm_detailed_arrays_match_its_stream_step_for_step():
    events = _stream_events(FIXTURES / "chat_stream_detailed_spec_metrics.sse")
    chunk_tokens: list[int] = []
    previous = 0
    spec: dict[str, object] = {}
    for event in events:
        usage = event.get("usage")
        assert isinstance(usage, dict)
        if event.get("choices"):
            tokens = int(usage["completion_tokens"]) - previous
            previous = int(usage["completion_tokens"])
            if tokens:
                chunk_tokens.append(tokens)
        metrics = event.get("metrics")
        if isinstance(metrics, dict):
            spec = metrics["speculative_decoding"]
    per_step = spec["per_step_accepted"]
    assert isinstance(per_step, list)
    assert len(per_step) == spec["num_spec_steps"] == 45
    assert spec["per_step_drafted"] == [3] * 45
    exact = align_per_step(per_step, output_tokens=previous)
    estimate = align_chunks_estimate(chunk_tokens, num_spec_tokens=3)
    assert isinstance(exact, StepAlignment) and isinstance(estimate, StepAlignment)
    assert previous == 48 and len(chunk_tokens) == 46
    assert exact.start_positions == estimate.start_positions
    assert exact.accepted == estimate.accepted
    (whole,) = acceptance_length_by_position([exact], max_tokens=48, bin_tokens=256)
    assert whole.steps.acceptance_length == pytest.approx(spec["mean_acceptance_length"])
    halves = acceptance_length_by_position([exact], max_tokens=48, bin_tokens=24)
    # Step 23 (1 accepted) starts at token 24; step 31 at 33: both in the second half.
    assert [b.steps.num_steps for b in halves] == [23, 22]
    assert halves[0].steps.acceptance_length == pytest.approx(1.0)
    assert halves[1].steps.acceptance_length == pytest.approx(1 + 2 / 22)
