"""A cell's acceptance cuts (`summary.acceptance_cuts`) from its request records.

Each successful request is placed on its output axis by `metrics.cuts.align_request`:
from vLLM's `detailed` per-step arrays when the record holds them (exact), else from the
streamed chunk sizes (an estimate). A group (a category, or the whole cell) is refused
whole, with the first request's reason, when any of its requests cannot be aligned:
dropping the refused requests would bias the cut towards the ones that streamed cleanly.
Pure: recomputable from `requests.jsonl`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from specbench.client.record import RequestRecord
from specbench.metrics.cuts import (
    DEFAULT_BIN_TOKENS,
    Refusal,
    StepAcceptance,
    StepAlignment,
    acceptance_length_by_position,
    acceptance_length_by_span,
    align_request,
)
from specbench.store.summary import AcceptanceCuts, CutGroup, PositionBinCut, StepCut


def num_spec_tokens_of(records: Sequence[RequestRecord]) -> int | None:
    """K as vLLM's per-request objects state it (`num_spec_tokens`); None when absent."""
    for record in records:
        if record.spec_decode and record.spec_decode.get("num_spec_tokens"):
            return int(record.spec_decode["num_spec_tokens"])
    return None


def _per_step(record: RequestRecord) -> list[int] | None:
    spec = record.spec_decode
    if not spec:
        return None
    steps = spec.get("per_step_accepted")
    if steps is not None:
        return [int(value) for value in steps]
    # vLLM leaves the arrays out when empty: a `detailed` request without verify steps.
    if spec.get("num_spec_steps") == 0 and "acceptance_histogram" in spec:
        return []
    return None


def align(record: RequestRecord, num_spec_tokens: int) -> StepAlignment | Refusal:
    """One request's alignment, or why it has none."""
    per_step = _per_step(record)
    if per_step is None and record.token_count_source == "chunks":
        return Refusal(
            "chunk token counts are themselves estimates (no per-chunk usage or token ids) "
            "and there are no per-step arrays"
        )
    return align_request(per_step, record.chunk_tokens, record.output_tokens or 0, num_spec_tokens)


def _step_cut(steps: StepAcceptance) -> StepCut:
    return StepCut(
        acceptance_length=steps.acceptance_length,
        num_steps=steps.num_steps,
        num_accepted_tokens=steps.num_accepted,
    )


def group_cuts(
    records: Sequence[RequestRecord], num_spec_tokens: int, max_tokens: int, bin_tokens: int
) -> CutGroup:
    """The cuts of one group of successful requests (see the module docstring)."""
    alignments: list[StepAlignment] = []
    refused: list[tuple[RequestRecord, Refusal]] = []
    for record in records:
        result = align(record, num_spec_tokens)
        if isinstance(result, Refusal):
            refused.append((record, result))
        else:
            alignments.append(result)
    if refused:
        first, why = refused[0]
        return CutGroup(
            num_requests=len(records),
            source=None,
            is_estimate=False,
            refusal=f"{len(refused)} of {len(records)} requests cannot be aligned; first "
            f"({first.question_id} turn {first.turn}): {why.reason}",
        )
    exact = all(a.exact for a in alignments)
    longest = max((r.output_tokens or 0 for r in records), default=0)
    bins = acceptance_length_by_position(alignments, max(max_tokens, longest, 1), bin_tokens)
    split = acceptance_length_by_span(
        zip(alignments, [r.answer_start_token for r in records], strict=True)
    )
    with_span = [r for r in records if r.answer_start_token is not None]
    common = {
        "num_requests": len(records),
        "source": "per_step_metrics" if exact else "chunks",
        "is_estimate": not exact,
        "position_bins": [
            PositionBinCut(start_token=b.start, end_token=b.end, **_step_cut(b.steps).model_dump())
            for b in bins
        ],
        "thinking_tokens": sum(r.thinking_tokens or 0 for r in with_span),
        "answer_tokens": sum(r.answer_tokens or 0 for r in with_span),
    }
    if isinstance(split, Refusal):
        return CutGroup(**common, thinking_refusal=split.reason)  # type: ignore[arg-type]
    return CutGroup(
        **common,  # type: ignore[arg-type]
        thinking=_step_cut(split.thinking),
        answer=_step_cut(split.answer),
        num_requests_with_span=split.num_requests_with_span,
    )


def cell_cuts(
    records: Sequence[RequestRecord],
    max_tokens: int,
    num_spec_tokens: int | None,
    bin_tokens: int = DEFAULT_BIN_TOKENS,
) -> AcceptanceCuts | None:
    """Cuts per category and overall; None without K or without successful requests.

    `num_spec_tokens` (K) comes from the per-request objects when they state it, else
    from the caller (the counters' per-position series).
    """
    ok = [r for r in records if r.ok]
    k = num_spec_tokens_of(ok) or num_spec_tokens
    if not ok or not k:
        return None
    by_category: dict[str, list[RequestRecord]] = defaultdict(list)
    for record in ok:
        by_category[record.category].append(record)
    return AcceptanceCuts(
        bin_tokens=bin_tokens,
        num_spec_tokens=k,
        overall=group_cuts(ok, k, max_tokens, bin_tokens),
        per_category={
            name: group_cuts(by_category[name], k, max_tokens, bin_tokens)
            for name in sorted(by_category)
        },
    )
