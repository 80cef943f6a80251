"""`summary.json`: the per-cell result contract that reports, the gate and users' scripts read.

Every field name carries its unit. Rates are fractions in [0, 1]. Each acceptance figure
says where it came from (`source`) and how it was averaged (`definition`):

- `step_weighted`: tokens emitted per verification step over all steps of the window,
  AL = 1 + Σaccepted / Σsteps (vLLM's own definition, from its `/metrics` counters or the
  per-request `metrics.speculative_decoding` objects pooled over requests).
- `mean_over_requests`: each request's own AL, then the plain mean over requests
  (NVIDIA specdec_bench's definition).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from specbench import SCHEMA_VERSION
from specbench.common.model import Frozen
from specbench.metrics.latency import Distribution

AcceptanceSource = Literal["server_counters", "per_request_metrics", "tokens_per_chunk"]
AcceptanceDefinition = Literal["step_weighted", "mean_over_requests"]


class SpecDecodeSummary(Frozen):
    """Acceptance over the measured window, from deltas of vLLM's spec-decode counters."""

    acceptance_length: float = Field(description="1 + Δaccepted / Δdrafts (step-weighted).")
    draft_acceptance_rate: float = Field(description="Δaccepted / Δdraft_tokens, in [0, 1].")
    per_position_acceptance: list[float] = Field(
        description="Δaccepted_per_pos[i] / Δdrafts, position 1 first; non-increasing."
    )
    conditional_acceptance: list[float | None] = Field(
        description="rate[i] / rate[i-1] (rate[-1] := 1); None where rate[i-1] is 0."
    )
    num_drafts: int = Field(description="Δ vllm:spec_decode_num_drafts_total.")
    num_draft_tokens: int = Field(description="Δ vllm:spec_decode_num_draft_tokens_total.")
    num_accepted_tokens: int = Field(description="Δ vllm:spec_decode_num_accepted_tokens_total.")
    num_accepted_tokens_per_position: list[int] = Field(
        description="Δ vllm:spec_decode_num_accepted_tokens_per_pos_total, position 1 first."
    )
    source: AcceptanceSource = "server_counters"
    definition: AcceptanceDefinition = "step_weighted"


class CategoryAcceptance(Frozen):
    """Acceptance of one category inside a mixed run, from per-request data."""

    num_requests: int = Field(description="Successful requests (turns) of this category.")
    acceptance_length: float | None = Field(description="None when speculation is off.")
    acceptance_source: AcceptanceSource | None = Field(
        description="per_request_metrics when the server sent them, else tokens_per_chunk."
    )
    definition: AcceptanceDefinition | None = Field(
        description="step_weighted for per_request_metrics, mean_over_requests for chunks."
    )
    draft_acceptance_rate: float | None = Field(
        default=None, description="Σaccepted / Σdraft_tokens; per_request_metrics only."
    )
    per_position_acceptance: list[float] | None = Field(
        default=None, description="From acceptance histograms; per_request_metrics only."
    )
    num_spec_steps: int | None = Field(
        default=None, description="Σ num_spec_steps; per_request_metrics only."
    )
    output_tokens: int = Field(description="Σ output tokens of this category's requests.")


StoppingRule = Literal[
    "all_conversations",
    "precision_reached",
    "all_conversations_precision_reached",
    "all_conversations_without_precision",
]


class FigurePrecision(Frozen):
    """One figure's 95% percentile-bootstrap interval (resampling conversations)."""

    value: float = Field(description="The figure as reported.")
    ci_low: float = Field(description="2.5th percentile of the bootstrap distribution.")
    ci_high: float = Field(description="97.5th percentile of the bootstrap distribution.")
    relative_half_width: float = Field(
        description="(ci_high − ci_low) / 2 / |value|: the achieved precision (lower is better)."
    )


class CellPrecision(Frozen):
    """How precise the cell's figures are, and why it stopped where it did."""

    target: float | None = Field(description="Precision target; None: every conversation.")
    min_conversations: int = Field(description="Floor before the cell may stop.")
    stopping_rule: StoppingRule = Field(
        description="precision_reached: stopped dispatching early; all_conversations*: "
        "measured every conversation (with or without reaching the target)."
    )
    conversations_used: int = Field(description="Conversations measured (drained included).")
    conversations_available: int = Field(description="Conversations of the workload.")
    figures: dict[str, FigurePrecision] = Field(
        description="output_tok_s_per_gpu, e2e_ms_median, ttft_ms_median → interval."
    )
    bootstrap_resamples: int = Field(description="Resamples of conversations.")
    seed: int = Field(description="Seed of the stratified order and of the bootstrap.")


class CellSummary(Frozen):
    """One measured cell: one server config × dataset × concurrency × repeat."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="Results format version.")
    label: str = Field(description="Server configuration name (e.g. baseline, eagle3).")
    workload: str = Field(
        description="Workload key: the results folder of the cell (its selection by default)."
    )
    dataset: str = Field(description="Dataset spec as given, e.g. speed-bench:qualitative.")
    categories: list[str] | None = Field(
        description="Categories selected; None: every category of the dataset."
    )
    entropy_tiers: list[str] | None = Field(
        description="Throughput entropy tiers selected; None: every tier."
    )
    category: str | None = Field(description="The one category measured; None when mixed.")
    concurrency: int = Field(description="Requests in flight while work remained.")
    repeat: int = Field(description="Repeat index, 0-based.")
    gpus: int = Field(description="GPUs serving (TP × DP): divisor of the per-GPU rates.")
    model: str = Field(description="Served model name the requests used.")
    endpoint: str = Field(description="Base URL of the server.")
    api: Literal["chat", "completions"] = Field(description="OpenAI route used.")
    client: Literal["aiohttp", "openai"] = Field(description="HTTP client implementation.")
    max_tokens: int = Field(description="Output cap per request (turn).")
    temperature: float = Field(description="Sampling temperature sent.")
    started_at: str = Field(description="UTC ISO-8601 start of the measured window.")
    finished_at: str = Field(description="UTC ISO-8601 end of the measured window.")

    num_conversations: int = Field(
        default=0,
        description="Distinct questions measured. A multi-turn question is one request per "
        "turn; every figure pools all turns of all questions (per turn, step-weighted).",
    )
    num_requests: int = Field(description="Measured requests (turns), failures included.")
    num_failed: int = Field(description="Requests that ended with an error.")
    duration_s: float = Field(
        description="Wall time of the measured window (first send → last end)."
    )
    input_tokens: int = Field(description="Σ prompt tokens of successful requests (server usage).")
    output_tokens: int = Field(
        description="Σ completion tokens of successful requests (server usage)."
    )
    output_tok_s: float = Field(description="output_tokens / duration_s.")
    output_tok_s_per_gpu: float = Field(description="output_tok_s / gpus.")
    request_per_s: float = Field(description="Successful requests / duration_s.")
    ttft_ms: Distribution = Field(description="First content chunk − send.")
    tpot_ms: Distribution = Field(
        description="(E2E − TTFT) / (output_tokens − 1), requests with ≥ 2 tokens."
    )
    e2e_ms: Distribution = Field(description="Last chunk − send.")
    step_gap_ms: Distribution = Field(
        description="Gaps between token-carrying chunks: per engine step, not per token, "
        "under speculation."
    )
    server_generation_tokens: int | None = Field(
        description="Δ vllm:generation_tokens_total over the window; None when absent."
    )
    server_prompt_tokens: int | None = Field(
        default=None, description="Δ vllm:prompt_tokens_total over the window; None when absent."
    )
    server_preemptions: int | None = Field(
        default=None,
        description="Δ vllm:num_preemptions_total: requests evicted for KV-cache space inside "
        "the window (non-zero means the cell measured a memory-starved server).",
    )
    steady_state_duration_s: float | None = Field(
        default=None,
        description="Window start → first slot idle (all `concurrency` slots busy before).",
    )
    steady_state_output_tok_s_per_gpu: float | None = Field(
        default=None,
        description="Output tokens of chunks inside the steady-state window / its length / gpus.",
    )
    full_window_output_tok_s_per_gpu: float | None = Field(
        default=None, description="output_tokens / duration_s / gpus (drain tail included)."
    )
    throughput_window: Literal["full", "steady_state"] = Field(
        default="full",
        description="Which window output_tok_s(_per_gpu) and request_per_s use: full for "
        "cells that measure every conversation, steady_state for precision-targeted ones.",
    )
    precision: CellPrecision | None = Field(
        default=None, description="Bootstrap intervals and stopping rule; None in older results."
    )
    spec_decode: SpecDecodeSummary | None = Field(description="None: no spec-decode series.")
    per_category: dict[str, CategoryAcceptance] = Field(description="Category → acceptance.")
