"""`summary.json`: the per-cell result contract that reports, the gate and users' scripts read.

Every field name carries its unit. Rates are fractions in [0, 1]. Each acceptance figure
says where it came from (`source`) and how it was averaged (`definition`):

- `step_weighted`: tokens emitted per verification step over all steps of the window,
  AL = 1 + Σaccepted / Σsteps (vLLM's own definition, from its `/metrics` counters or the
  per-request `metrics.speculative_decoding` objects pooled over requests).
- `mean_over_requests`: each request's own tokens per chunk after the first, then the
  plain mean over requests (an older estimate; NOT specdec_bench's definition).
- `official` (`official_acceptance`, `per_category.*.official_acceptance_length`): the
  official SPEED-Bench AL as NVIDIA `specdec_bench` computes it and model cards publish it:
  per question Σ tokens / Σ streamed chunks over all its turns (prefill chunk counted, a
  final EOS removed), per category the mean over questions, overall the mean over all
  questions (`specbench.metrics.official`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from specbench import SCHEMA_VERSION
from specbench.common.model import Frozen
from specbench.metrics.latency import Distribution

AcceptanceSource = Literal["server_counters", "per_request_metrics", "tokens_per_chunk"]
AcceptanceDefinition = Literal["step_weighted", "mean_over_requests"]
CoalescingCheck = Literal["per_step_metrics", "num_spec_steps", "chunk_size", "none"]


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
    official_acceptance_length: float | None = Field(
        default=None,
        description="Official SPEED-Bench AL (definition `official`): mean over this "
        "category's questions of Σ tokens / Σ chunks over each question's turns.",
    )
    official_trimmed_acceptance_length: float | None = Field(
        default=None,
        description="The same with the newer specdec_bench branch's trim (per turn: leading "
        "1-token chunk and last chunk dropped, EOS kept).",
    )
    num_questions: int | None = Field(
        default=None, description="Questions averaged in official_acceptance_length."
    )
    official_merged_chunks: int | None = Field(
        default=None,
        description="Merged chunks seen in this category's turns (official AL then an estimate).",
    )


class OfficialAcceptanceSummary(Frozen):
    """The official SPEED-Bench AL of the cell (NVIDIA specdec_bench's formula), from chunks."""

    definition: Literal["official"] = "official"
    acceptance_length: float | None = Field(
        description="Mean over all questions of Σ tokens / Σ chunks over each question's turns "
        "(prefill chunk counted, a final EOS removed)."
    )
    trimmed_acceptance_length: float | None = Field(
        description="The newer branch's variant: per turn a leading 1-token chunk and the last "
        "chunk dropped, EOS kept; same averaging."
    )
    num_questions: int = Field(description="Questions averaged.")
    num_turns: int = Field(description="Turns (requests) pooled into their questions.")
    num_chunks: int = Field(description="Token-carrying chunks counted.")
    num_tokens: int = Field(description="Tokens counted (EOS removed).")
    merged_chunks: int = Field(
        description="Steps seen merged into other chunks (chunks above K + 1 tokens, or fewer "
        "chunks than the steps vLLM's per-request object implies); 0 when none."
    )
    coalescing_check: CoalescingCheck = Field(description="What the merge check could use.")
    is_estimate: bool = Field(
        description="True when merged chunks were seen (chunks were not steps) or token "
        "counts per chunk were not exact."
    )
    drafted_step_share: float | None = Field(
        default=None,
        description="Σ num_spec_steps / Σ (chunks − 1): decode steps that carried drafts "
        "(below 1 for n-gram and other proposers that skip steps).",
    )
    eos_stripped_turns: int = Field(default=0, description="Turns that ended on EOS.")


#: Why a cell stopped dispatching: the value of `CellPrecision.stopping_rule`.
StopReason = Literal[
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
    stopping_rule: StopReason = Field(
        description="precision_reached: stopped dispatching early; all_conversations*: "
        "measured every conversation (with or without reaching the target)."
    )
    conversations_used: int = Field(description="Conversations measured (drained included).")
    conversations_available: int = Field(description="Conversations of the workload.")
    figures: dict[str, FigurePrecision] = Field(
        description="output_tok_s_per_gpu (output_tok_s when the GPU count is unknown), "
        "e2e_ms_median, ttft_ms_median → interval."
    )
    bootstrap_resamples: int = Field(description="Resamples of conversations.")
    seed: int = Field(
        description="Seed of the stratified order and of the bootstrap: the workload's seed "
        "+ the launch (0-based; older results: the workload's seed on every launch)."
    )


CutSource = Literal["per_step_metrics", "chunks"]


class StepCut(Frozen):
    """Verify steps pooled over one cut: AL = 1 + num_accepted_tokens / num_steps."""

    acceptance_length: float | None = Field(
        description="1 + Σ accepted / Σ steps over the cut's steps (step-weighted, bonus "
        "included); None without steps."
    )
    num_steps: int = Field(description="Verify steps whose first token lies in the cut.")
    num_accepted_tokens: int = Field(description="Draft tokens those steps accepted.")


class PositionBinCut(StepCut):
    """Steps that started at output positions [start_token, end_token)."""

    start_token: int = Field(description="First output position of the bin (0-based).")
    end_token: int = Field(description="End of the bin (exclusive); the last ends at max_tokens.")


class CutGroup(Frozen):
    """The acceptance cuts of one category (or of the whole cell)."""

    num_requests: int = Field(description="Successful requests (turns) of the group.")
    source: CutSource | None = Field(
        description="per_step_metrics: vLLM's `detailed` per-step arrays (exact); chunks: "
        "streamed chunk sizes (estimate); None when refused."
    )
    is_estimate: bool = Field(description="True when any request was aligned from chunks.")
    refusal: str | None = Field(
        default=None,
        description="Why no cut was computed (e.g. the server coalesced steps); None when "
        "computed. A group is refused whole when any of its requests cannot be aligned.",
    )
    position_bins: list[PositionBinCut] | None = Field(
        default=None, description="AL by output position bin; None when refused."
    )
    thinking: StepCut | None = Field(
        default=None, description="Steps starting before the answer; None without a span."
    )
    answer: StepCut | None = Field(
        default=None, description="Steps starting at or after the answer start."
    )
    thinking_refusal: str | None = Field(
        default=None,
        description='Why there is no thinking/answer split ("no thinking span found …").',
    )
    num_requests_with_span: int = Field(
        default=0, description="Requests with a thinking span (only they enter the split)."
    )
    thinking_tokens: int = Field(
        default=0, description="Σ output tokens of thinking spans (markers included)."
    )
    answer_tokens: int = Field(
        default=0, description="Σ output tokens after the thinking spans (requests with a span)."
    )


class AcceptanceCuts(Frozen):
    """AL along the output and thinking vs answer (`specbench.metrics.cuts`), per category."""

    definition: Literal["step_weighted"] = "step_weighted"
    bin_tokens: int = Field(description="Width of a position bin in output tokens.")
    num_spec_tokens: int = Field(description="K: draft tokens per step (chunk refusal limit).")
    overall: CutGroup = Field(description="Every successful request of the cell.")
    per_category: dict[str, CutGroup] = Field(description="Category → its cuts.")


class CellErrors(Frozen):
    """Standard errors of the cell's gated figures, from within the run (`measure.cell_errors`).

    Stratified cluster bootstrap: conversations resampled with replacement inside each
    category, seeded; a figure's error is the std (ddof 1) of its value over the resamples,
    times √(n/(n−1)) for n the conversations of the smallest category it draws from.
    """

    method: Literal["stratified_cluster_bootstrap"] = "stratified_cluster_bootstrap"
    num_conversations: int = Field(description="Conversations resampled (successful turns).")
    resamples: int = Field(description="Bootstrap resamples.")
    seed: int = Field(description="Seed of the resampling.")
    figures: dict[str, float] = Field(
        default_factory=dict,
        description="Summary figure name (acceptance_length, official_acceptance_length, "
        "per_position_acceptance_<i>, output_tok_s_per_gpu, ttft_ms_median, e2e_ms_p90, …) "
        "→ its standard error, in the figure's units.",
    )
    categories: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="Category → acceptance_length / official_acceptance_length → error.",
    )
    category_conversations: dict[str, int] = Field(
        default_factory=dict, description="Category → conversations resampled (its stratum)."
    )
    note: str | None = Field(
        default=None, description="Why figures are absent (e.g. too few conversations)."
    )


EnergyReason = Literal[
    "off",
    "unavailable",
    "no_device",
    "unreachable",
    "no_energy_counter",
    "gpu_missing",
    "counter_reset",
    "counter_backwards",
    "counter_frozen",
    "no_output_tokens",
]


class EnergySummary(Frozen):
    """GPU board energy over the window (`specbench.energy`), from `energy.jsonl`.

    The counter of each counted GPU is read at the same instants as `metrics_before.prom`
    and `metrics_after.prom`; joules are the deltas summed over those GPUs. A power sampler
    (≥ 1 Hz, trapezoid rule) cross-checks them. Board energy only: CPU, memory, network
    and cooling are not in it. A figure that cannot be given is null with its `reason`,
    never 0.
    """

    definition: Literal["gpu_board_energy"] = "gpu_board_energy"
    source: str = Field(description='"amdsmi", "nvml", the exporter URL, or "off".')
    source_detail: str | None = Field(
        default=None, description="Why this source (or none) was chosen, in words."
    )
    gpus: list[str] = Field(description="The GPUs counted, in the source's numbering.")
    valid: bool = Field(description="True when joules and every figure from it are given.")
    reason: EnergyReason | None = Field(description="Why not valid; None when valid.")
    detail: str | None = Field(default=None, description="The reason in words.")
    window_s: float | None = Field(
        description="Seconds between the two counter reads (the window's scrapes)."
    )
    output_tokens: int | None = Field(
        description="Δ vllm:generation_tokens_total over the window (the divisor)."
    )
    joules: float | None = Field(description="Σ over the counted GPUs of the counter delta, J.")
    joules_per_output_token: float | None = Field(description="joules / output_tokens.")
    output_tokens_per_joule: float | None = Field(description="output_tokens / joules.")
    mean_power_w_per_gpu: float | None = Field(description="joules / window_s / len(gpus).")
    per_gpu_joules: dict[str, float] | None = Field(
        default=None, description="Each counted GPU's counter delta, J."
    )
    samples: int = Field(default=0, description="Power samples taken inside the window.")
    sample_errors: int = Field(
        default=0,
        description="Power samples that failed inside the window; they lower the sampling "
        "rate but do not invalidate the window (its two edge reads decide).",
    )
    sampled_joules: float | None = Field(
        default=None,
        description="Σ over the counted GPUs of sampled power integrated by the trapezoid "
        "rule from the first read to the last; None with fewer than two samples or no power.",
    )
    counter_power_agree: bool | None = Field(
        default=None,
        description="|joules − sampled_joules| ≤ 5% of sampled_joules; None when either is "
        "missing.",
    )


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
    repeat: int = Field(description="Repeat index, 0-based: a complete pass within one launch.")
    launch: int = Field(
        default=0,
        description="Server launch index, 0-based: which fresh start of the server config "
        "measured the cell (the suite's `launches`); 0 in results written before launches.",
    )
    gpus: int | None = Field(
        description="GPUs serving (TP × PP × DP): divisor of the per-GPU rates; None when "
        "not known (bench without --gpus): rates are then per server only."
    )
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
    output_tok_s_per_gpu: float | None = Field(
        description="output_tok_s / gpus; None when gpus is unknown (see output_tok_s)."
    )
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
    num_skipped_turns: int | None = Field(
        default=None,
        description="Of num_failed: later turns never sent because an earlier turn of their "
        "conversation failed (error type skipped_after_failed_turn). None: older results.",
    )
    achieved_concurrency: float | None = Field(
        default=None,
        description="Mean requests in flight: Σ request time (send → end) / duration_s. Below "
        "concurrency by the drain tail and turn gaps. None: older results.",
    )
    running_batch_mean: float | None = Field(
        default=None,
        description="Time-weighted mean of vllm:num_requests_running over the window, from "
        "window_samples.jsonl (each sample holds until the next, the last until the window's "
        "end): vLLM's batch size, which a K schedule's ranges are in. None without the gauge, "
        "with fewer than 2 samples, or in results written before it was recorded.",
    )
    running_batch_samples: int | None = Field(
        default=None,
        description="Polls of vllm:num_requests_running inside the window behind "
        "running_batch_mean (0: the server has no such gauge). None: older results.",
    )
    effective_k: float | None = Field(
        default=None,
        description="Δ vllm:spec_decode_num_draft_tokens_total / Δ "
        "vllm:spec_decode_num_drafts_total: draft tokens per verify step (K under a fixed K; "
        "the step-weighted mean K under a schedule). None without speculation or in results "
        "written before it was recorded.",
    )
    per_step_drafted_counts: dict[int, int] | None = Field(
        default=None,
        description="K → verify steps that drafted K tokens, from the requests' "
        "per_step_drafted arrays (vLLM's --per-request-spec-decode-metrics detailed). None "
        "when the server did not send them.",
    )
    generation_tokens_mismatch: float | None = Field(
        default=None,
        description="(output_tokens − server_generation_tokens) / server_generation_tokens: "
        "the client's token count checked against the server's. None without the counter.",
    )
    prefix_cache_reset: bool | None = Field(
        default=None,
        description="True: the server confirmed the prefix-cache reset before the window; "
        "False: it refused (the window may have hit a warm cache); None: not attempted.",
    )
    prefix_cache_reset_detail: str | None = Field(
        default=None, description="The server's answer to the reset, or why it was not sent."
    )
    server_prefix_cache_queries: int | None = Field(
        default=None, description="Δ vllm:prefix_cache_queries_total (tokens); None when absent."
    )
    server_prefix_cache_hits: int | None = Field(
        default=None, description="Δ vllm:prefix_cache_hits_total (tokens); None when absent."
    )
    prefix_cache_hit_rate: float | None = Field(
        default=None,
        description="server_prefix_cache_hits / server_prefix_cache_queries over the window, "
        "in [0, 1]; None without the counters.",
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
    history: Literal["streamed_text", "decoded"] | None = Field(
        default=None,
        description="How later turns replayed earlier answers: streamed_text, or decoded "
        "(token ids decoded with special tokens, as specdec_bench); None: written before it "
        "was recorded (streamed_text).",
    )
    official_acceptance: OfficialAcceptanceSummary | None = Field(
        default=None,
        description="Official SPEED-Bench AL of the cell; None when not speculating or from "
        "before it was recorded (recomputed from requests.jsonl by the report).",
    )
    acceptance_cuts: AcceptanceCuts | None = Field(
        default=None,
        description="AL by output position and thinking vs answer per category; None when "
        "not speculating or from before it was recorded.",
    )
    standard_errors: CellErrors | None = Field(
        default=None,
        description="Standard error of each gated figure from within the run; None in "
        "results written before it was recorded (the gate then uses its older rule).",
    )
    energy: EnergySummary | None = Field(
        default=None,
        description="GPU board energy over the window; None in results written before it "
        "was recorded.",
    )
