"""The per-step K histogram of a cell: `per_step_drafted` of its requests' records, pooled."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from specbench.client.record import RequestRecord
from specbench.client.sse import SSEDecoder
from specbench.metrics.per_request import per_step_drafted_counts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm"


def record(
    question: str, spec: dict[str, object] | None, error: str | None = None
) -> RequestRecord:
    return RequestRecord(
        question_id=question, turn=0, num_turns=1, category="qa", spec_decode=spec,
        error_type=error,
    )  # fmt: skip


def detailed(drafted: list[int]) -> dict[str, object]:
    """A `detailed` per-request object (only the fields this reads, plus its sums)."""
    return {
        "num_spec_steps": len(drafted),
        "num_draft_tokens": sum(drafted),
        "per_step_drafted": drafted,
    }


def test_a_schedules_steps_are_counted_by_their_k_over_the_records():
    # A schedule K 5 at batch ≤ 2, K 1 above: two requests ramped up alone, then ran in a
    # batch of 16; a third arrived at full batch and drained alone.
    records = [
        record("a", detailed([5, 5, 1, 1, 1, 1])),
        record("b", detailed([5, 1, 1, 1])),
        record("c", detailed([1, 1, 1, 5, 5])),
        # A failed request sent no object; one of a summary-mode server has no array.
        record("d", None, error="timeout"),
        record("e", {"num_spec_steps": 3, "num_draft_tokens": 3}),
    ]
    counts = per_step_drafted_counts(r.spec_decode for r in records)
    assert counts == {1: 10, 5: 5}
    assert list(counts) == [1, 5]  # K ascending
    # Every verify step is counted once: the sum is the steps the arrays list.
    assert sum(counts.values()) == 15
    assert sum(k * n for k, n in counts.items()) == 14 + 8 + 13  # the drafted tokens


def test_without_detailed_metrics_there_is_no_histogram_not_an_empty_one():
    summary_mode = [record("a", {"num_spec_steps": 3, "num_draft_tokens": 9})]
    assert per_step_drafted_counts(r.spec_decode for r in summary_mode) is None
    assert per_step_drafted_counts([None, None]) is None  # not speculating
    assert per_step_drafted_counts([]) is None
    # A request with no verify step at all still says the server is `detailed`.
    assert per_step_drafted_counts([{"per_step_drafted": []}]) == {}
    with pytest.raises(ValueError, match="cannot draft -1"):
        per_step_drafted_counts([{"per_step_drafted": [3, -1]}])


def test_real_vllm_detailed_stream_gives_one_k_for_every_step():
    # vLLM 0.32 on CPU, EAGLE3 at a fixed K = 3, one request of 45 verify steps.
    decoder = SSEDecoder()
    path = FIXTURES / "chat_stream_detailed_spec_metrics.sse"
    events = decoder.feed(path.read_bytes()) + decoder.flush()
    specs = [
        metrics["speculative_decoding"]
        for event in events
        if event != b"[DONE]" and isinstance(metrics := orjson.loads(event).get("metrics"), dict)
    ]
    assert len(specs) == 1
    assert per_step_drafted_counts(specs) == {3: 45}
