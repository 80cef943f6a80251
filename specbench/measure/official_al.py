"""The official SPEED-Bench AL of one cell from its saved records (`requests.jsonl`).

Applies `specbench.metrics.official` to what the client saved per request: the token count
of every token-carrying chunk (the prefill chunk is the first one), the finish reason (a
turn that ended on the EOS token has it removed from its last chunk, as `specdec_bench`
does), and vLLM's per-request spec-decode object when the server sent it (the configured K
to spot merged chunks; with `--per-request-spec-decode-metrics detailed`, the exact step
floor of every turn).

A pure function of the records, so older results directories get the same figure
recomputed; what older records cannot tell (the stop reason) is listed in `notes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specbench.client.record import RequestRecord
from specbench.metrics.official import (
    OfficialAcceptance,
    TurnChunks,
    coalesced_chunks,
    drafted_step_share,
    official_acceptance,
    official_chunks,
    step_count_floor,
    trimmed_chunks,
)
from specbench.store.summary import CoalescingCheck, OfficialAcceptanceSummary


def ends_with_eos(record: RequestRecord) -> bool:
    """Whether the turn's last streamed token is the EOS token.

    vLLM streams the EOS token (it is in `token_ids` and `completion_tokens`) and reports
    `finish_reason: "stop"` with `stop_reason: null` for it; a stop string or stop token id
    of the request gives a non-null `stop_reason`. Records from before `stop_reason` was
    saved read `finish_reason == "stop"` as EOS (specbench sends no stop strings).
    """
    return record.finish_reason == "stop" and record.stop_reason is None


@dataclass(frozen=True, slots=True)
class CellOfficial:
    """Official and trimmed AL of one cell, and how far chunks could be trusted as steps."""

    official: OfficialAcceptance
    trimmed: OfficialAcceptance
    #: What the merge check used: per_step_metrics (detailed), num_spec_steps (summary),
    #: chunk_size (K + 1 only: K from the records), or none.
    coalescing_check: CoalescingCheck
    #: Chunks larger than K + 1 tokens (merged for certain); None when K is unknown.
    oversized_chunks: int | None
    #: Σ over turns of max(0, step floor − chunks): steps merged into other chunks (at least).
    merged_steps: int | None
    #: Σ over turns of the larger of the two, per turn: the merged chunks seen.
    merged_per_turn: int
    num_spec_tokens: int | None
    #: Σ num_spec_steps / Σ (chunks − 1): decode steps that carried drafts.
    drafted_step_share: float | None
    eos_stripped_turns: int
    token_counts_exact: bool

    #: merged_per_turn by category.
    merged_per_category: dict[str, int]

    @property
    def merged_chunks(self) -> int:
        """Merged chunks seen: per turn the larger of the two checks, summed (0: none seen)."""
        return self.merged_per_turn

    @property
    def is_estimate(self) -> bool:
        """True when chunks were seen merged, or token counts per chunk were guesses."""
        return not self.token_counts_exact or self.merged_chunks > 0


def cell_official(records: Sequence[RequestRecord]) -> CellOfficial | None:
    """The official AL over the cell's successful turns; None when no turn carried a chunk."""
    ok = [r for r in records if r.ok and r.chunk_tokens]
    if not ok:
        return None
    k_values = {
        int(r.spec_decode["num_spec_tokens"])
        for r in ok
        if r.spec_decode and r.spec_decode.get("num_spec_tokens")
    }
    k = max(k_values) if k_values else None
    official_turns: list[TurnChunks] = []
    trimmed_turns: list[TurnChunks] = []
    oversized = merged = 0
    checks: set[str] = set()
    spec_steps = decode_steps = 0
    spec_known = True
    eos_turns = 0
    merged_per_category: dict[str, int] = {}
    for record in ok:
        eos = ends_with_eos(record)
        eos_turns += eos
        raw = [n for n in record.chunk_tokens if n > 0]
        spec = record.spec_decode or {}
        floor = step_count_floor(spec, sum(raw)) if spec else None
        turn_merged = turn_oversized = 0
        if floor is not None:
            turn_merged = max(0, floor - len(raw))
            merged += turn_merged
            checks.add("per_step_metrics" if spec.get("per_step_accepted") else "num_spec_steps")
        if k is not None:
            turn_oversized = coalesced_chunks(raw, k)
            oversized += turn_oversized
        merged_per_category[record.category] = merged_per_category.get(record.category, 0) + max(
            turn_merged, turn_oversized
        )
        if spec.get("num_spec_steps") is not None:
            spec_steps += int(spec["num_spec_steps"])
            decode_steps += len(raw) - 1
        else:
            spec_known = False
        official_turns.append(
            TurnChunks(record.question_id, record.category, official_chunks(raw, eos))
        )
        trimmed_turns.append(TurnChunks(record.question_id, record.category, trimmed_chunks(raw)))
    check: CoalescingCheck = "chunk_size" if k is not None else "none"
    if checks:
        check = "num_spec_steps" if "num_spec_steps" in checks else "per_step_metrics"
    return CellOfficial(
        official=official_acceptance(official_turns),
        trimmed=official_acceptance(trimmed_turns),
        coalescing_check=check,
        oversized_chunks=oversized if k is not None else None,
        merged_steps=merged if checks else None,
        merged_per_turn=sum(merged_per_category.values()),
        merged_per_category=merged_per_category,
        num_spec_tokens=k,
        drafted_step_share=drafted_step_share(spec_steps, decode_steps) if spec_known else None,
        eos_stripped_turns=eos_turns,
        token_counts_exact=all(r.token_count_source != "chunks" for r in ok),
    )


def official_summary(official: CellOfficial | None) -> OfficialAcceptanceSummary | None:
    """The `summary.json` block of a cell's official AL; None when no turn carried a chunk."""
    if official is None:
        return None
    return OfficialAcceptanceSummary(
        acceptance_length=official.official.overall,
        trimmed_acceptance_length=official.trimmed.overall,
        num_questions=len(official.official.per_question),
        num_turns=official.official.num_turns,
        num_chunks=official.official.num_chunks,
        num_tokens=official.official.num_tokens,
        merged_chunks=official.merged_chunks,
        coalescing_check=official.coalescing_check,
        is_estimate=official.is_estimate,
        drafted_step_share=official.drafted_step_share,
        eos_stripped_turns=official.eos_stripped_turns,
    )
