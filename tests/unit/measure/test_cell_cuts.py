"""A cell's acceptance cuts from request records: exact, estimated, or refused with a reason."""

from __future__ import annotations

from specbench.client.record import RequestRecord
from specbench.measure.cuts import cell_cuts


def _record(
    category: str,
    chunks: list[int],
    per_step: list[int] | None,
    answer_start: int | None = None,
) -> RequestRecord:
    record = RequestRecord(question_id=f"q-{category}", turn=0, num_turns=1, category=category)
    record.chunk_tokens = chunks
    record.chunk_offsets_ns = list(range(1, len(chunks) + 1))
    record.output_tokens = sum(chunks)
    record.answer_start_token = answer_start
    if per_step is not None:
        record.spec_decode = {
            "num_spec_steps": len(per_step),
            "num_accepted_draft_tokens": sum(per_step),
            "num_draft_tokens": 3 * len(per_step),
            "acceptance_histogram": [per_step.count(j) for j in range(4)],
            "num_spec_tokens": 3,
            "per_step_accepted": per_step,
            "per_step_drafted": [3] * len(per_step),
        }
    return record


def test_exact_cuts_split_thinking_from_answer_and_bin_by_position() -> None:
    # Steps start at 1, 5, 7, 8, 12: accepted 3, 1, 0, 3, 2 (15 tokens in all).
    steps = [3, 1, 0, 3, 2]
    records = [
        _record("math", [1, 4, 2, 1, 4, 3], steps, answer_start=8),
        _record("qa", [1, 4, 2, 1, 4, 3], steps, answer_start=None),
    ]
    cuts = cell_cuts(records, max_tokens=16, num_spec_tokens=None, bin_tokens=8)
    assert cuts is not None and cuts.num_spec_tokens == 3
    math = cuts.per_category["math"]
    assert math.source == "per_step_metrics" and not math.is_estimate
    # Thinking: steps at 1, 5, 7 (accepted 4 over 3 steps); answer: 8, 12 (5 over 2).
    assert math.thinking is not None and math.answer is not None
    assert (math.thinking.num_steps, math.thinking.num_accepted_tokens) == (3, 4)
    assert math.answer.acceptance_length == 1 + 5 / 2
    assert (math.thinking_tokens, math.answer_tokens) == (8, 7)
    assert math.position_bins is not None
    assert [(b.start_token, b.end_token, b.num_steps) for b in math.position_bins] == [
        (0, 8, 3),
        (8, 16, 2),
    ]
    qa = cuts.per_category["qa"]
    assert qa.thinking is None
    assert qa.thinking_refusal is not None and "no thinking span found" in qa.thinking_refusal
    # Overall pools both requests; only the one with a span enters the split.
    assert cuts.overall.num_requests_with_span == 1
    assert cuts.overall.position_bins is not None
    assert cuts.overall.position_bins[0].num_steps == 6


def test_chunks_give_a_labelled_estimate_and_coalescing_refuses_the_group() -> None:
    estimate = _record("coding", [1, 4, 2, 1], None)
    coalesced = _record("writing", [1, 4, 6], None)
    cuts = cell_cuts([estimate, coalesced], max_tokens=16, num_spec_tokens=3)
    assert cuts is not None
    coding = cuts.per_category["coding"]
    assert coding.source == "chunks" and coding.is_estimate
    assert coding.position_bins is not None
    assert coding.position_bins[0].acceptance_length == 1 + (3 + 1 + 0) / 3
    writing = cuts.per_category["writing"]
    assert writing.position_bins is None and writing.source is None
    assert writing.refusal is not None and "coalesced" in writing.refusal
    assert cuts.overall.refusal is not None and cuts.overall.refusal.startswith("1 of 2")


def test_no_cuts_without_k_or_requests() -> None:
    assert cell_cuts([_record("qa", [1, 2], None)], max_tokens=8, num_spec_tokens=None) is None
    assert cell_cuts([], max_tokens=8, num_spec_tokens=3) is None
