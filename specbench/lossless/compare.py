"""Pair a speculative cell's requests with its baseline's and compare their outputs.

Pairing: by (question_id, turn); a question that occurs several times in a cell pairs its
k-th occurrence with the other side's k-th. Outputs are compared as token ids when both
records carry them (vLLM's `return_token_ids`), else as text, and every pair says which.

Multi-turn conversations: turn t > 0 is sent with the target's own answers to turns
0..t-1 as history, so its prompt is the same on both sides only if every earlier turn of
that conversation matched exactly. Such a later turn is compared like a first turn;
after the first divergence, the conversation's later turns are not compared (their
prompts differ) and are counted under `history_diverged`; after a turn that could not be
compared (failed, missing, no saved output), under `history_unverified`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from specbench.client.record import RequestRecord

MatchStatus = Literal["match", "diverged", "not_compared"]
ComparedBy = Literal["token_ids", "text"]
#: Why a pair was not compared (the keys of `CellComparison.not_compared`).
NotComparedReason = Literal[
    "failed",
    "only_in_baseline",
    "only_in_speculative",
    "no_saved_output",
    "history_diverged",
    "history_unverified",
]


@dataclass(frozen=True, slots=True)
class PairResult:
    """One (question, turn) of the speculative cell next to the same one of the baseline."""

    question_id: str
    turn: int
    category: str
    status: MatchStatus
    compared_by: ComparedBy | None = None
    #: First differing position (token index, or character index for text); None if equal.
    first_divergence: int | None = None
    baseline_length: int | None = None
    speculative_length: int | None = None
    reason: NotComparedReason | None = None


def first_divergence(baseline: Sequence[object], speculative: Sequence[object]) -> int | None:
    """Index of the first position where the two differ; None when they are equal.

    When one is a strict prefix of the other, the divergence is at the shorter length
    (the first position that only one of them has).
    """
    for index, (left, right) in enumerate(zip(baseline, speculative, strict=False)):
        if left != right:
            return index
    if len(baseline) != len(speculative):
        return min(len(baseline), len(speculative))
    return None


def compare_pair(baseline: RequestRecord, speculative: RequestRecord) -> PairResult:
    """Compare the outputs of two records of the same (question, turn)."""
    key = (speculative.question_id, speculative.turn, speculative.category)
    if not baseline.ok or not speculative.ok:
        return PairResult(*key, status="not_compared", reason="failed")
    left: Sequence[object] | None
    right: Sequence[object] | None
    compared_by: ComparedBy
    if baseline.output_token_ids is not None and speculative.output_token_ids is not None:
        left, right, compared_by = (
            baseline.output_token_ids,
            speculative.output_token_ids,
            "token_ids",
        )
    elif baseline.output_text is not None and speculative.output_text is not None:
        left, right, compared_by = baseline.output_text, speculative.output_text, "text"
    else:
        return PairResult(*key, status="not_compared", reason="no_saved_output")
    divergence = first_divergence(left, right)
    return PairResult(
        *key,
        status="match" if divergence is None else "diverged",
        compared_by=compared_by,
        first_divergence=divergence,
        baseline_length=len(left),
        speculative_length=len(right),
    )


_Key = tuple[str, int]  # (question_id, occurrence)


def _conversations(records: Iterable[RequestRecord]) -> dict[_Key, dict[int, RequestRecord]]:
    """Records grouped by conversation (question id and occurrence), then by turn."""
    grouped: dict[_Key, dict[int, RequestRecord]] = {}
    seen: dict[tuple[str, int], int] = defaultdict(int)
    for record in records:
        occurrence = seen[(record.question_id, record.turn)]
        seen[(record.question_id, record.turn)] += 1
        grouped.setdefault((record.question_id, occurrence), {})[record.turn] = record
    return grouped


def compare_records(
    baseline: Iterable[RequestRecord], speculative: Iterable[RequestRecord]
) -> list[PairResult]:
    """Every (question, turn) of either cell, compared or with the reason it was not.

    Results come in the speculative cell's conversation order (baseline-only ones last),
    turns ascending; see the module docstring for the multi-turn rule.
    """
    base = _conversations(baseline)
    spec = _conversations(speculative)
    results: list[PairResult] = []
    for key in [*spec, *(k for k in base if k not in spec)]:
        base_turns, spec_turns = base.get(key, {}), spec.get(key, {})
        history: NotComparedReason | None = None  # why later turns cannot be compared
        for turn in sorted(set(base_turns) | set(spec_turns)):
            left, right = base_turns.get(turn), spec_turns.get(turn)
            present = right or left
            assert present is not None
            identity = (present.question_id, turn, present.category)
            if left is None or right is None:
                reason: NotComparedReason = (
                    "only_in_speculative" if left is None else "only_in_baseline"
                )
                results.append(PairResult(*identity, status="not_compared", reason=reason))
                history = history or "history_unverified"
            elif history is not None:
                results.append(PairResult(*identity, status="not_compared", reason=history))
            else:
                result = compare_pair(left, right)
                results.append(result)
                if result.status == "diverged":
                    history = "history_diverged"
                elif result.status == "not_compared":
                    history = "history_unverified"
    return results
