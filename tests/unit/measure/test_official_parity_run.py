"""specbench's own stream against specdec_bench's, on the same prompts, models and engine.

tests/fixtures/runs/specdec-parity/ is a real specbench run (README there); the
specdec_bench fixtures hold the official harness's streams and figures of the same setup.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specbench import store
from specbench.measure.official_al import cell_official
from specbench.metrics.official import TurnChunks, official_acceptance

FIXTURES = Path(__file__).parents[2] / "fixtures"
RUN = FIXTURES / "runs" / "specdec-parity"


@pytest.mark.parametrize(
    ("label", "fixture", "counters", "merged"),
    [
        ("ngram", "fixture_ngram.json", (971, 2172), 8),
        ("eagle3", "fixture_eagle3.json", (3402, 675), 2),
    ],
)
def test_same_outputs_same_counters_same_official_where_chunks_agree(
    label: str, fixture: str, counters: tuple[int, int], merged: int
) -> None:
    cell = RUN / label / "speed-bench-qualitative" / "c1" / "r0"
    records = list(store.read_records(cell / store.REQUESTS))
    summary = json.loads((cell / store.SUMMARY).read_text())
    reference = json.loads((FIXTURES / "specdec_bench" / fixture).read_text())
    theirs = {(r["question_id"], r["turn"]): r for r in reference["requests"]}
    assert len(records) == len(theirs) == 32
    assert all(
        r.output_token_ids == theirs[r.question_id, r.turn]["output_token_ids"] for r in records
    )
    assert summary["history"] == "decoded"
    in_process = reference["vllm_prometheus_in_process"]
    assert (
        summary["spec_decode"]["num_drafts"],
        summary["spec_decode"]["num_accepted_tokens"],
    ) == counters
    assert (in_process["num_drafts"], in_process["num_accepted_tokens"]) == counters
    ours = cell_official(records)
    assert ours is not None
    assert ours.merged_chunks == merged == summary["official_acceptance"]["merged_chunks"]
    # Questions whose chunks arrived the same way in both tools: identical official AL.
    differing = {
        r.question_id
        for r in records
        if r.chunk_tokens != theirs[r.question_id, r.turn]["chunk_token_counts"]
    }
    same = [q for q in reference["reported"]["per_question"] if q not in differing]
    assert len(same) >= 19
    for question in same:
        assert ours.official.per_question[question] == pytest.approx(
            reference["reported"]["per_question"][question], abs=1e-12
        )
    # Where the SSE stream merged chunks, specbench saw fewer chunks: a higher figure.
    for question in differing:
        assert (
            ours.official.per_question[question] > reference["reported"]["per_question"][question]
        )
    assert ours.official.overall == pytest.approx(reference["reported"]["overall"], rel=0.01)
    assert ours.is_estimate
    recomputed = official_acceptance(
        TurnChunks(r["question_id"], r["category"], r["chunk_token_counts"])
        for r in reference["requests"]
    )
    assert recomputed.overall == pytest.approx(reference["reported"]["overall"], abs=1e-12)
