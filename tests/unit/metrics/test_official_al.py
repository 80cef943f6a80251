"""The official SPEED-Bench AL (specdec_bench's formula) reproduces specdec_bench's own figures.

The fixtures in tests/fixtures/specdec_bench/ are specdec_bench's reported numbers and the
per-request vLLM streams of the same runs (see their README). Records are rebuilt the way
specbench's client saves them: one entry per streamed output that added tokens (the prefill
chunk first), the finish reason, and vLLM's per-request spec-decode object.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specbench.client.record import RequestRecord
from specbench.measure.official_al import cell_official
from specbench.metrics.official import (
    TurnChunks,
    coalesced_chunks,
    drafted_step_share,
    official_acceptance,
    official_chunks,
    question_acceptance_length,
    step_count_floor,
    trimmed_chunks,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "specdec_bench"


def _load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def _records(fixture: dict) -> list[RequestRecord]:
    records = []
    for r in fixture["requests"]:
        cumulative = r["raw_cumulative_token_counts"]
        chunks = [b - a for a, b in zip([0, *cumulative[:-1]], cumulative, strict=True) if b > a]
        records.append(
            RequestRecord(
                question_id=r["question_id"],
                turn=r["turn"],
                num_turns=1,
                category=r["category"],
                chunk_tokens=chunks,
                output_tokens=len(r["output_token_ids"]),
                finish_reason=r["finish_reason"],
                spec_decode=r["vllm_spec_decode_metrics"],
                output_token_ids=r["output_token_ids"],
            )
        )
    return records


def _summary_only(records: list[RequestRecord]) -> list[RequestRecord]:
    """The same records as a server at `--per-request-spec-decode-metrics summary` saves them."""
    out = []
    for r in records:
        spec = {k: v for k, v in (r.spec_decode or {}).items() if not k.startswith("per_step_")}
        out.append(
            RequestRecord(**{**{s: getattr(r, s) for s in r.__slots__}, "spec_decode": spec})
        )
    return out


@pytest.mark.parametrize(
    ("name", "overall", "categories"),
    [
        ("fixture_ngram.json", 2.1287,
         {"coding": 2.2519, "math": 2.1828, "summarization": 2.0306, "writing": 2.0494}),
        ("fixture_eagle3.json", 1.2889,
         {"coding": 1.5175, "math": 1.2178, "summarization": 1.2104, "writing": 1.2101}),
        ("fixture_parity_eagle3.json", 2.1429, {"alpha": 2.0794, "beta": 2.9683, "gamma": 1.0}),
    ],
)  # fmt: skip
def test_reproduces_specdec_bench_to_4_decimals(name, overall, categories):
    fixture = _load(name)
    reported = fixture["reported"]
    for records in (_records(fixture), _summary_only(_records(fixture))):
        result = cell_official(records)
        assert result is not None
        official = result.official
        # specdec_bench's printed table (4 decimals) and its unrounded json
        assert f"{official.overall:.4f}" == f"{overall:.4f}"
        assert official.overall == pytest.approx(reported["overall"], abs=1e-12)
        assert {c: round(v, 4) for c, v in official.per_category.items()} == categories
        for question, value in reported["per_question"].items():
            assert official.per_question[question] == pytest.approx(value, abs=1e-12)
        assert official.num_tokens == sum(len(r["output_token_ids"]) for r in fixture["requests"])
    # with the detailed per-step arrays the steps are counted: no chunk was merged here
    detailed = cell_official(_records(fixture))
    assert detailed is not None
    assert detailed.coalescing_check == "per_step_metrics"
    assert detailed.merged_steps == 0
    assert detailed.oversized_chunks == 0
    assert not detailed.is_estimate
    summary = cell_official(_summary_only(_records(fixture)))
    assert summary is not None and summary.coalescing_check == "num_spec_steps"


def test_recorded_chunks_are_what_specdec_bench_consumed():
    # No request hit EOS, so the official chunks are the raw streamed chunks, prefill included.
    for name in ("fixture_ngram.json", "fixture_eagle3.json", "fixture_parity_eagle3.json"):
        fixture = _load(name)
        for record, raw in zip(_records(fixture), fixture["requests"], strict=True):
            assert official_chunks(record.chunk_tokens, False) == raw["chunk_token_counts"]
            assert record.chunk_tokens[0] == 1


def test_trimmed_branch_variant():
    ngram = cell_official(_records(_load("fixture_ngram.json")))
    eagle = cell_official(_records(_load("fixture_eagle3.json")))
    assert ngram is not None and eagle is not None
    assert round(ngram.trimmed.overall or 0, 4) == 2.1532
    assert round(eagle.trimmed.overall or 0, 4) == 1.2946
    assert {c: round(v, 4) for c, v in ngram.trimmed.per_category.items()} == {
        "coding": 2.2880, "math": 2.2134, "summarization": 2.0546, "writing": 2.0568,
    }  # fmt: skip


def test_parity_pools_turns_per_question_not_per_turn_mean():
    # Two-turn question: even prompt (chunks [1] + [4]*8) then odd prompt ([1]*33).
    even, odd = [1] + [4] * 8, [1] * 33
    assert question_acceptance_length([even, odd]) == pytest.approx(66 / 42)
    assert round(66 / 42, 4) == 1.5714
    per_turn_mean = (33 / 9 + 1.0) / 2
    assert round(per_turn_mean, 4) == 2.3333
    fixture = _load("fixture_parity_eagle3.json")
    result = cell_official(_records(fixture))
    assert result is not None
    two_turn = {"a2721d6b3319014ac08af92c929612ac", "c82d7cf79f753f44506e599885e24b8e"}
    for question in two_turn:
        assert round(result.official.per_question[question], 4) == 1.5714
    # overall = mean over the 8 questions (2.1429), not over the 3 categories (2.0159)
    assert round(result.official.overall or 0, 4) == 2.1429
    cats = result.official.per_category
    assert round(sum(cats.values()) / len(cats), 4) == 2.0159


def test_ngram_step_counting_and_drafted_share():
    fixture = _load("fixture_ngram.json")
    result = cell_official(_records(fixture))
    assert result is not None
    steps = sum(r["vllm_spec_decode_metrics"]["num_spec_steps"] for r in fixture["requests"])
    chunks = sum(len(r["chunk_token_counts"]) for r in fixture["requests"])
    assert steps == 971
    assert chunks == 1948  # 32 prefill chunks + 971 drafted steps + 945 undrafted steps
    assert result.drafted_step_share == pytest.approx(971 / (1948 - 32))
    eagle = cell_official(_records(_load("fixture_eagle3.json")))
    assert eagle is not None and eagle.drafted_step_share == 1.0


def test_eos_rule():
    assert official_chunks([1, 3, 4], ends_with_eos=False) == [1, 3, 4]
    assert official_chunks([1, 3, 4], ends_with_eos=True) == [1, 3, 3]
    assert official_chunks([1, 3, 1], ends_with_eos=True) == [1, 3]  # EOS-only chunk dropped
    assert official_chunks([1, 0, 3], ends_with_eos=False) == [1, 3]
    assert trimmed_chunks([1, 3, 4]) == [3]
    assert trimmed_chunks([1, 4]) == [1]
    assert trimmed_chunks([2, 3, 4]) == [2, 3]


def test_eos_and_stop_reason_in_records():
    base = {"question_id": "q", "turn": 0, "num_turns": 1, "category": "c"}
    eos = RequestRecord(**base, chunk_tokens=[1, 4, 2], finish_reason="stop")
    stop_string = RequestRecord(
        **base, chunk_tokens=[1, 4, 2], finish_reason="stop", stop_reason="x"
    )
    result = cell_official([eos])
    assert result is not None and result.official.overall == pytest.approx(6 / 3)
    assert result.eos_stripped_turns == 1
    other = cell_official([stop_string])
    assert other is not None and other.official.overall == pytest.approx(7 / 3)


def test_coalescing_is_detected():
    k = 3
    assert coalesced_chunks([1, 4, 8, 13, 2], k) == 2
    base = {"question_id": "q", "turn": 0, "num_turns": 1, "category": "c"}
    spec = {"num_spec_steps": 5, "num_spec_tokens": 3, "num_accepted_draft_tokens": 10}
    # 5 drafted steps + prefill = at least 6 steps, but only 3 chunks arrived: 3 merged
    merged = RequestRecord(**base, chunk_tokens=[1, 8, 7], finish_reason="length", spec_decode=spec)
    result = cell_official([merged])
    assert result is not None
    assert result.oversized_chunks == 2
    assert result.merged_steps == 3
    assert result.is_estimate
    assert result.merged_chunks == 3
    # detailed arrays: the steps without drafts are counted too (16 tokens: 1 + 15 drafted
    # + 2 undrafted steps of 1 token = 8 steps; 5 merged away)
    detailed = {**spec, "per_step_accepted": [3, 3, 1, 1, 2], "per_step_drafted": [3] * 5}
    assert step_count_floor(detailed, 18) == 8
    assert step_count_floor(spec, 18) == 6
    assert step_count_floor({}, 18) is None


def test_overall_is_mean_over_questions():
    turns = [
        TurnChunks("a", "x", [1, 4, 4]),
        TurnChunks("b", "x", [1, 1]),
        TurnChunks("c", "y", [1, 2]),
    ]
    result = official_acceptance(turns)
    assert result.per_category == {"x": pytest.approx((3.0 + 1.0) / 2), "y": 1.5}
    assert result.overall == pytest.approx((3.0 + 1.0 + 1.5) / 3)
    assert drafted_step_share(0, 0) is None
