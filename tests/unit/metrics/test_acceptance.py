"""The acceptance formulas of REFERENCE.md §2, checked against published and hand-made numbers."""

import pytest

from specbench.metrics.acceptance import (
    acceptance_length,
    conditional_acceptance,
    draft_acceptance_rate,
    effective_k,
    per_position_acceptance,
    per_position_from_histogram,
)


def test_gqa_card_row_is_consistent():
    # The GQA card's MT-Bench row: per-position 0.745 / 0.537 / 0.387 → AL 2.669, rate 55.6 %.
    drafts = 1000
    per_pos = [745, 537, 387]
    rates = per_position_acceptance(per_pos, drafts)
    assert rates == [0.745, 0.537, 0.387]
    accepted = sum(per_pos)  # each accepted draft is counted at exactly one position
    assert acceptance_length(accepted, drafts) == pytest.approx(2.669)
    assert draft_acceptance_rate(accepted, drafts * 3) == pytest.approx(0.5563, abs=1e-4)


def test_conditional_acceptance_recovers_the_process():
    rates = [0.8, 0.8 * 0.75, 0.8 * 0.75 * 0.7]
    assert conditional_acceptance(rates) == pytest.approx([0.8, 0.75, 0.7])
    assert conditional_acceptance([0.5, 0.0, 0.0]) == [0.5, 0.0, None]


def test_no_drafts_is_none_not_zero():
    assert acceptance_length(0, 0) is None
    assert draft_acceptance_rate(0, 0) is None
    assert per_position_acceptance([0, 0, 0], 0) is None


def test_impossible_inputs_raise():
    with pytest.raises(ValueError):
        draft_acceptance_rate(10, 5)
    with pytest.raises(ValueError):
        acceptance_length(-1, 5)
    with pytest.raises(ValueError):
        per_position_acceptance([6], 5)


def test_histogram_to_per_position():
    # 10 steps: 2 accepted 0, 3 accepted 1, 1 accepted 2, 4 accepted 3 drafts.
    rates = per_position_from_histogram([2, 3, 1, 4])
    assert rates == pytest.approx([0.8, 0.5, 0.4])
    accepted = 3 * 1 + 1 * 2 + 4 * 3
    assert 1 + sum(rates) == pytest.approx(acceptance_length(accepted, 10))
    assert per_position_from_histogram([0, 0, 0, 0]) is None


def test_effective_k_is_draft_tokens_per_verify_step():
    # A fixed K = 3: every step drafted 3, whatever was accepted.
    assert effective_k(480, 160) == 3.0
    # A schedule: 90 steps at K = 1 and 10 at K = 5 → (90 + 50) / 100.
    assert effective_k(90 * 1 + 10 * 5, 100) == pytest.approx(1.4)
    # No step carried drafts (speculation off, or K = 0 throughout): None, never 0.
    assert effective_k(0, 0) is None
    with pytest.raises(ValueError):
        effective_k(-1, 5)
