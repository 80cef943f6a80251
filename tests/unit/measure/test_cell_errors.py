"""measure.cell_errors: the stratified cluster bootstrap against known values."""

from __future__ import annotations

import math
import statistics

import pytest

from specbench.client.record import RequestRecord
from specbench.measure.cell_errors import MIN_CONVERSATIONS, cell_errors
from specbench.metrics.latency import distribution
from specbench.store.summary import CategoryAcceptance, CellSummary, SpecDecodeSummary


def turn(qid: str, category: str, accepted: int, steps: int, ttft_ms: float) -> RequestRecord:
    """A turn of 1 + steps chunks (prefill, then steps decode chunks) with its spec object."""
    r = RequestRecord(question_id=qid, turn=0, num_turns=1, category=category)
    decode = [1 + accepted // steps + (1 if i < accepted % steps else 0) for i in range(steps)]
    r.chunk_tokens = [1, *decode]
    r.output_tokens = sum(r.chunk_tokens)
    r.start_ns, r.ttft_ns = 0, int(ttft_ms * 1e6)
    r.e2e_ns = r.ttft_ns + steps * 10**7
    r.chunk_offsets_ns = [r.ttft_ns + i * 10**7 for i in range(steps + 1)]
    r.spec_decode = {
        "num_spec_steps": steps,
        "num_accepted_draft_tokens": accepted,
        "num_draft_tokens": 3 * steps,
        "acceptance_histogram": [0, 0, steps, 0],
    }
    return r


def cell(records: list[RequestRecord], al: float) -> CellSummary:
    spec = SpecDecodeSummary(
        acceptance_length=al,
        draft_acceptance_rate=(al - 1) / 3,
        per_position_acceptance=[1.0, 1.0, 0.0],
        conditional_acceptance=[1.0, 1.0, 0.0],
        num_drafts=1,
        num_draft_tokens=3,
        num_accepted_tokens=2,
        num_accepted_tokens_per_position=[1, 1, 0],
    )
    categories = {
        name: CategoryAcceptance(
            num_requests=1,
            acceptance_length=2.0,
            acceptance_source="per_request_metrics",
            definition="step_weighted",
            output_tokens=1,
        )
        for name in {r.category for r in records}
    }
    return CellSummary.model_construct(
        spec_decode=spec,
        per_category=categories,
        official_acceptance=None,
        output_tok_s=100.0,
        output_tok_s_per_gpu=50.0,
        concurrency=4,
        ttft_ms=distribution([r.ttft_ns / 1e6 for r in records]),
    )


def test_the_error_of_acceptance_length_is_that_of_a_mean_of_clusters():
    # 40 conversations of 100 steps each accepting 150 or 250 drafts: AL − 1 per
    # conversation is 1.5 or 2.5, so AL = 3.0 and its SE is sd(1.5, 2.5, …) / √40.
    records = [turn(f"q{i}", "all", 150 if i % 2 else 250, 100, 10.0) for i in range(40)]
    errors = cell_errors(records, cell(records, al=3.0), seed=3)
    expected = statistics.stdev([1.5, 2.5] * 20) / math.sqrt(40)  # 0.0801
    assert errors.figures["acceptance_length"] == pytest.approx(expected, rel=0.12)
    # The reported figure (server counters) may differ: the relative error carries over.
    scaled = cell_errors(records, cell(records, al=3.3), seed=3)
    assert scaled.figures["acceptance_length"] == pytest.approx(
        errors.figures["acceptance_length"] * 1.1
    )
    # Identical TTFTs and throughput ratios: no spread at all.
    assert errors.figures["ttft_ms_median"] == 0.0
    assert errors.figures["output_tok_s_per_gpu"] == pytest.approx(
        errors.figures["output_tok_s"] / 2, abs=1e-9
    )
    assert errors.num_conversations == 40 and errors.note is None
    assert set(errors.categories) == {"all"}


def test_categories_are_strata_and_carry_their_own_error():
    # Category a: every conversation alike (no error); b: half 1.5, half 2.5 per step.
    records = [turn(f"a{i}", "a", 200, 100, 10.0) for i in range(20)]
    records += [turn(f"b{i}", "b", 150 if i % 2 else 250, 100, 10.0 + i) for i in range(20)]
    errors = cell_errors(records, cell(records, al=3.0), seed=1)
    assert errors.categories["a"]["acceptance_length"] == 0.0
    b_expected = statistics.stdev([1.5, 2.5] * 10) / math.sqrt(20)
    assert errors.categories["b"]["acceptance_length"] == pytest.approx(b_expected, rel=0.12)
    # Stratified: category counts are fixed, so the overall AL only carries b's spread,
    # at half weight: SE = b's / 2.
    assert errors.figures["acceptance_length"] == pytest.approx(b_expected / 2, rel=0.12)
    assert errors.figures["ttft_ms_p90"] > 0  # b's TTFTs spread over 10–29 ms


def test_too_few_conversations_give_no_noise_estimate():
    records = [turn(f"q{i}", "all", 200, 100, 10.0) for i in range(MIN_CONVERSATIONS - 1)]
    errors = cell_errors(records, cell(records, al=3.0))
    assert errors.figures == {} and errors.categories == {}
    assert errors.note == "no noise estimate: 4 conversations (< 5)"
