"""Pairing and comparing outputs request by request: ids, text fallback, multi-turn rule."""

from __future__ import annotations

from specbench.client.record import RequestRecord
from specbench.lossless.compare import compare_records, first_divergence


def record(
    question_id: str,
    turn: int = 0,
    ids: list[int] | None = None,
    text: str | None = None,
    *,
    category: str = "qa",
    error: str | None = None,
) -> RequestRecord:
    return RequestRecord(
        question_id=question_id,
        turn=turn,
        num_turns=2,
        category=category,
        output_token_ids=ids,
        output_text=text,
        error_type=error,
    )


def test_first_divergence_positions() -> None:
    assert first_divergence([5, 6, 7], [5, 6, 7]) is None
    assert first_divergence([5, 6, 7], [9, 6, 7]) == 0
    assert first_divergence([5, 6, 7], [5, 6, 8]) == 2
    # One output a strict prefix of the other: they differ where only one has a token.
    assert first_divergence([5, 6, 7], [5, 6]) == 2
    assert first_divergence([], [1]) == 0
    assert first_divergence("abcd", "abXd") == 2


def test_ids_are_compared_before_text_and_text_is_the_fallback() -> None:
    base = [record("q1", ids=[1, 2, 3], text="same"), record("q2", text="hello world")]
    spec = [record("q1", ids=[1, 2, 4], text="same"), record("q2", text="hello there")]
    first, second = compare_records(base, spec)
    assert (first.status, first.compared_by, first.first_divergence) == ("diverged", "token_ids", 2)
    assert (first.baseline_length, first.speculative_length) == (3, 3)
    assert (second.status, second.compared_by, second.first_divergence) == ("diverged", "text", 6)


def test_pairs_by_question_and_turn_not_by_order() -> None:
    base = [record("b", ids=[7, 8]), record("a", ids=[1, 2])]
    spec = [record("a", ids=[1, 2]), record("b", ids=[7, 8])]
    results = compare_records(base, spec)
    assert [(r.question_id, r.status) for r in results] == [("a", "match"), ("b", "match")]


def test_later_turns_are_compared_only_after_identical_history() -> None:
    base = [
        record("same", 0, [1, 2]),
        record("same", 1, [3, 4]),
        record("split", 0, [1, 2]),
        record("split", 1, [3, 4]),
    ]
    spec = [
        record("same", 0, [1, 2]),
        record("same", 1, [3, 5]),
        record("split", 0, [1, 9]),
        record("split", 1, [3, 4]),  # equal, but it answered a different history
    ]
    results = {(r.question_id, r.turn): r for r in compare_records(base, spec)}
    assert results[("same", 1)].status == "diverged"
    assert results[("same", 1)].first_divergence == 1
    assert results[("split", 0)].status == "diverged"
    assert results[("split", 1)].status == "not_compared"
    assert results[("split", 1)].reason == "history_diverged"


def test_failures_missing_records_and_unsaved_outputs_are_not_compared() -> None:
    base = [
        record("failed", 0, [1], error="http_500"),
        record("onlybase", 0, [1]),
        record("nosave", 0),
        record("nosave", 1),
    ]
    spec = [
        record("failed", 0, [1]),
        record("onlyspec", 0, [1]),
        record("nosave", 0),
        record("nosave", 1),
    ]
    results = {(r.question_id, r.turn): r for r in compare_records(base, spec)}
    assert results[("failed", 0)].reason == "failed"
    assert results[("onlybase", 0)].reason == "only_in_baseline"
    assert results[("onlyspec", 0)].reason == "only_in_speculative"
    assert results[("nosave", 0)].reason == "no_saved_output"
    assert results[("nosave", 1)].reason == "history_unverified"
    assert all(r.status == "not_compared" for r in results.values())


def test_a_question_asked_twice_pairs_occurrence_with_occurrence() -> None:
    base = [record("q", 0, [1]), record("q", 0, [2])]
    spec = [record("q", 0, [1]), record("q", 0, [3])]
    assert [r.status for r in compare_records(base, spec)] == ["match", "diverged"]
