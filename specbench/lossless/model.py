"""`lossless.json`: what `specbench lossless` found, as a versioned, validated model.

Rates are fractions in [0, 1]. A divergence position is a token index when outputs were
compared as token ids and a character index when compared as text (`unit` says which).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from specbench.common.model import Frozen

#: Version of `lossless.json`; bump on an incompatible change.
LOSSLESS_SCHEMA_VERSION = 1

#: Upper bounds (exclusive) of the divergence-position buckets, then an open last bucket.
DEPTH_BUCKETS = (1, 16, 64, 256)


class MatchCount(Frozen):
    """Compared pairs and how many were identical."""

    num_compared: int = Field(description="Pairs whose outputs were compared.")
    num_matched: int = Field(description="Pairs whose outputs were identical.")
    exact_match_rate: float | None = Field(description="num_matched / num_compared; None if 0.")


class DivergenceDepth(Frozen):
    """Where diverged outputs first differ: early means a broken draft, late means drift."""

    unit: Literal["token", "character"] | None = Field(
        description="token (compared as ids) or character (compared as text); None if none."
    )
    count: int = Field(description="Diverged pairs described.")
    min: int | None = Field(description="Earliest first-divergence position.")
    median: float | None = Field(description="Median first-divergence position.")
    max: int | None = Field(description="Latest first-divergence position.")
    mean_matched_fraction: float | None = Field(
        description="Mean of position / baseline output length: share of output identical."
    )
    buckets: dict[str, int] = Field(
        description="Diverged pairs by first-divergence position: 0, 1-15, 16-63, 64-255, 256+."
    )


class Divergence(Frozen):
    """One pair whose outputs differ."""

    question_id: str = Field(description="Question id of the dataset row.")
    turn: int = Field(description="Turn index, 0-based.")
    category: str = Field(description="Category of the row.")
    compared_by: Literal["token_ids", "text"] = Field(description="What was compared.")
    first_divergence: int = Field(description="First differing position (see unit above).")
    baseline_length: int = Field(description="Baseline output length (tokens or characters).")
    speculative_length: int = Field(description="Speculative output length (same unit).")


class CellCheck(Frozen):
    """One speculative cell compared with the baseline cell of the same prompts."""

    speculative: str = Field(description="Speculative label.")
    baseline: str = Field(description="Baseline label.")
    dataset: str = Field(description="Dataset spec as given to the run.")
    dataset_dir: str = Field(description="Dataset folder of both cells (selection included).")
    concurrency: int = Field(description="Concurrency of both cells.")
    repeat: int = Field(description="Repeat index of both cells.")
    speculative_cell: str = Field(description="Speculative cell folder, relative to results.")
    baseline_cell: str = Field(description="Baseline cell folder, relative to results.")
    skipped: str | None = Field(description="Why the cells were not compared at all; else None.")
    num_pairs: int = Field(description="(question, turn) pairs seen in either cell.")
    overall: MatchCount = Field(description="Every compared pair.")
    first_turns: MatchCount = Field(description="Turn-0 pairs (prompts identical by design).")
    later_turns: MatchCount = Field(
        description="Turns > 0 whose earlier turns all matched (so their prompts match)."
    )
    compared_by: Literal["token_ids", "text", "mixed"] | None = Field(
        description="token_ids when every compared pair had ids; text is the fallback."
    )
    not_compared: dict[str, int] = Field(
        description="Pairs not compared, by reason: failed, only_in_baseline, "
        "only_in_speculative, no_saved_output, history_diverged, history_unverified."
    )
    divergence: DivergenceDepth = Field(description="First-divergence positions.")
    per_category: dict[str, MatchCount] = Field(description="Category → match counts.")
    divergences: list[Divergence] = Field(description="Every diverged pair.")
    passed: bool | None = Field(
        description="exact_match_rate ≥ min_match_rate; None when nothing was compared."
    )


class AcceptanceRow(Frozen):
    """One speculative cell's acceptance length by each definition."""

    label: str = Field(description="Speculative label.")
    dataset: str = Field(description="Dataset spec as given to the run.")
    dataset_dir: str = Field(description="Dataset folder (selection included).")
    concurrency: int = Field(description="Concurrency of the cell.")
    repeat: int = Field(description="Repeat index of the cell.")
    server_counters_al: float | None = Field(
        description="Step-weighted: 1 + Δaccepted / Δdrafts from /metrics counters."
    )
    num_drafts: int | None = Field(description="Δ vllm:spec_decode_num_drafts_total.")
    per_request_pooled_al: float | None = Field(
        description="Step-weighted: 1 + Σaccepted / Σnum_spec_steps of per-request objects."
    )
    num_spec_steps: int = Field(description="Σ num_spec_steps of the per-request objects.")
    per_request_coverage: float | None = Field(
        description="Successful requests with a per-request object / successful requests."
    )
    pooled_vs_counters: float | None = Field(
        description="per_request_pooled_al / server_counters_al − 1."
    )
    tokens_per_chunk_al: float | None = Field(
        description="Mean over requests (turns) of Σ tokens of chunks 2..n / (n − 1): an older "
        "estimate, not the official SPEED-Bench AL (see official_al)."
    )
    official_al: float | None = Field(
        default=None,
        description="Official SPEED-Bench AL (specdec_bench's definition): per question Σ "
        "tokens / Σ chunks over its turns (prefill counted, EOS removed), mean over questions.",
    )
    official_merged_chunks: int | None = Field(
        default=None, description="Merged chunks seen (the official AL is then an estimate)."
    )
    num_chunk_requests: int = Field(description="Requests with ≥ 2 chunks (with an estimate).")
    chunk_token_sources: list[str] = Field(
        description="How chunk token counts were known: usage, token_ids (exact) or chunks."
    )
    num_requests: int = Field(description="Successful requests of the cell.")


class LosslessReport(Frozen):
    """Everything `specbench lossless` found in one results directory."""

    schema_version: int = Field(default=LOSSLESS_SCHEMA_VERSION, description="Format version.")
    results_dir: str = Field(description="The results directory checked.")
    min_match_rate: float = Field(description="Threshold a cell's exact-match rate must reach.")
    baselines: list[str] = Field(description="Baseline labels.")
    speculative: list[str] = Field(description="Speculative labels.")
    cells: list[CellCheck] = Field(description="Each speculative cell with a baseline cell.")
    unpaired: list[str] = Field(description="Speculative cells without a baseline cell (why).")
    incomplete: list[str] = Field(
        default_factory=list,
        description="Cells whose requests.jsonl disagrees with their summary (not compared; "
        "the check cannot pass).",
    )
    missing: list[str] = Field(
        default_factory=list,
        description="Cells of the suite with neither a summary nor a failure (never measured "
        "or interrupted).",
    )
    totals: dict[str, MatchCount] = Field(description="Speculative label → all its cells.")
    acceptance: list[AcceptanceRow] = Field(description="Every speculative cell's three ALs.")
    passed: bool = Field(
        description="Some pair was compared and every compared cell reached min_match_rate."
    )
