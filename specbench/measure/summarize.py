"""Turn one cell's raw data (request records and two `/metrics` scrapes) into its summary.

A pure function of what the cell saved, so anyone can recompute `summary.json` from
`requests.jsonl`, `metrics_before.prom`, `metrics_after.prom` and `window_samples.jsonl`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from specbench.client.record import RequestRecord
from specbench.measure.cell_errors import cell_errors
from specbench.measure.cuts import cell_cuts
from specbench.measure.loop import SKIPPED_AFTER_FAILED_TURN
from specbench.measure.official_al import cell_official, official_summary
from specbench.measure.precision import (
    bootstrap_intervals,
    precise_enough,
    steady_state_window,
)
from specbench.metrics.acceptance import (
    acceptance_length,
    conditional_acceptance,
    draft_acceptance_rate,
    effective_k,
    per_position_acceptance,
)
from specbench.metrics.latency import distribution, output_tok_s, per_gpu, tpot_ms
from specbench.metrics.load import (
    achieved_concurrency,
    prefix_cache_hit_rate,
    running_batch,
    token_count_mismatch,
)
from specbench.metrics.per_request import (
    mean_chunk_acceptance_length,
    per_step_drafted_counts,
    pool_request_metrics,
)
from specbench.metrics.prometheus import (
    GENERATION_TOKENS,
    PREEMPTIONS,
    PREFIX_CACHE_HITS,
    PREFIX_CACHE_QUERIES,
    PROMPT_TOKENS,
    SPEC_ACCEPTED,
    SPEC_DRAFT_TOKENS,
    SPEC_DRAFTS,
    MetricsSnapshot,
    counter_delta,
    per_position_delta,
)
from specbench.stats.bootstrap import BOOTSTRAP_RESAMPLES
from specbench.store.summary import (
    CategoryAcceptance,
    CellPrecision,
    CellSummary,
    FigurePrecision,
    SpecDecodeSummary,
    StopReason,
)
from specbench.store.window_samples import WindowSample
from specbench.suite.model import WorkloadSpec


@dataclass(frozen=True, slots=True)
class CellSpec:
    """One cell: which server and load level, and its workload's settings (whole)."""

    label: str
    #: The workload's key (its results folder).
    workload: str
    settings: WorkloadSpec
    concurrency: int
    repeat: int
    gpus: int | None
    model: str
    endpoint: str
    #: Requests sent and discarded before the window: the workload's, plus a first cell's.
    warmup: int
    #: Reset the prefix cache before the window (False: prefix caching is off).
    reset_prefix_cache: bool = True
    #: The floor of a precision-targeted cell and the workload's size (measure.precision).
    min_conversations: int = 0
    conversations_available: int = 0
    #: Which fresh start of the server config measures the cell (0-based).
    launch: int = 0

    @property
    def order_seed(self) -> int:
        """Seed of the cell's stratified order and bootstrap: the workload's `seed` + launch.

        Each launch of a precision-targeted point stops on its own first N conversations,
        so its value varies with the conversations drawn as a rerun's does, and the
        launch-level interval covers that too (docs/cost-and-precision.md).
        """
        return self.settings.seed + self.launch

    @property
    def precision(self) -> float | None:
        """This cell's precision target (None: every conversation)."""
        return self.settings.precision_at(self.concurrency)

    @property
    def categories(self) -> tuple[str, ...] | None:
        chosen = self.settings.categories
        return tuple(chosen) if chosen is not None else None

    @property
    def entropy_tiers(self) -> tuple[str, ...] | None:
        return tuple(self.settings.entropy_tiers) if self.settings.entropy_tiers else None

    @property
    def category(self) -> str | None:
        """The one category selected, if exactly one is."""
        chosen = self.settings.categories
        return chosen[0] if chosen and len(chosen) == 1 else None


@dataclass(frozen=True, slots=True)
class PrefixCacheOutcome:
    """What became of the prefix-cache reset before the window (None: not attempted)."""

    reset: bool | None
    detail: str | None


@dataclass(frozen=True, slots=True)
class Window:
    """When the measured window ran: UTC wall clock for the record, perf-counter duration."""

    started_at: str
    finished_at: str
    duration_s: float


def spec_decode_summary(
    before: MetricsSnapshot, after: MetricsSnapshot
) -> SpecDecodeSummary | None:
    """Acceptance over the window from counter deltas; None when the server does not speculate."""
    drafts = counter_delta(before, after, SPEC_DRAFTS)
    if drafts is None:
        return None
    draft_tokens = counter_delta(before, after, SPEC_DRAFT_TOKENS) or 0
    accepted = counter_delta(before, after, SPEC_ACCEPTED) or 0
    per_position_counts = per_position_delta(before, after)
    rates = per_position_acceptance(per_position_counts, drafts) or []
    al = acceptance_length(accepted, drafts)
    if al is None:
        return None  # speculation is on but no step carried drafts in this window
    return SpecDecodeSummary(
        acceptance_length=al,
        draft_acceptance_rate=draft_acceptance_rate(accepted, draft_tokens) or 0.0,
        per_position_acceptance=rates,
        conditional_acceptance=conditional_acceptance(rates),
        num_drafts=drafts,
        num_draft_tokens=draft_tokens,
        num_accepted_tokens=accepted,
        num_accepted_tokens_per_position=per_position_counts,
    )


def category_acceptance(
    records: Sequence[RequestRecord], speculating: bool
) -> dict[str, CategoryAcceptance]:
    """Acceptance per category from per-request metrics when present, else tokens per chunk."""
    by_category: dict[str, list[RequestRecord]] = defaultdict(list)
    for record in records:
        if record.ok:
            by_category[record.category].append(record)
    result: dict[str, CategoryAcceptance] = {}
    for category in sorted(by_category):
        group = by_category[category]
        output_tokens = sum(r.output_tokens or 0 for r in group)
        specs = [r.spec_decode for r in group if r.spec_decode]
        if not speculating:
            result[category] = CategoryAcceptance(
                num_requests=len(group),
                acceptance_length=None,
                acceptance_source=None,
                definition=None,
                output_tokens=output_tokens,
            )
        elif specs and len(specs) == len(group):
            pooled = pool_request_metrics(specs)
            result[category] = CategoryAcceptance(
                num_requests=len(group),
                acceptance_length=pooled.acceptance_length,
                acceptance_source="per_request_metrics",
                definition="step_weighted",
                draft_acceptance_rate=pooled.draft_acceptance_rate,
                per_position_acceptance=pooled.per_position_acceptance,
                num_spec_steps=pooled.num_spec_steps,
                output_tokens=output_tokens,
            )
        else:
            result[category] = CategoryAcceptance(
                num_requests=len(group),
                acceptance_length=mean_chunk_acceptance_length(r.chunk_tokens for r in group),
                acceptance_source="tokens_per_chunk",
                definition="mean_over_requests",
                output_tokens=output_tokens,
            )
    return result


def summarize_cell(
    records: Sequence[RequestRecord],
    before: MetricsSnapshot,
    after: MetricsSnapshot,
    spec: CellSpec,
    window: Window,
    prefix_cache: PrefixCacheOutcome | None = None,
    samples: Sequence[WindowSample] = (),
) -> CellSummary:
    """The cell's summary: what it is, the client's figures, the server's counter deltas,
    the running batch from the window's polls (`samples`) and the acceptance, then the
    precision of its figures and their standard errors."""
    ok = [r for r in records if r.ok]
    output_tokens = sum(r.output_tokens or 0 for r in ok)
    summary = CellSummary(
        **_cell_labels(spec, window),
        **_client_figures(records, ok, output_tokens, window, spec.gpus),
        **_server_figures(before, after, output_tokens, prefix_cache),
        **_batch_figures(records, before, after, samples, window),
        **_acceptance_figures(records, before, after, spec),
    )
    summary = with_precision(summary, records, spec)
    return summary.model_copy(
        update={"standard_errors": cell_errors(records, summary, seed=spec.order_seed)}
    )


def _cell_labels(spec: CellSpec, window: Window) -> dict[str, Any]:
    """What the cell is and when it ran."""
    return {
        "label": spec.label,
        "workload": spec.workload,
        "dataset": spec.settings.dataset,
        "categories": list(spec.categories) if spec.categories is not None else None,
        "entropy_tiers": list(spec.entropy_tiers) if spec.entropy_tiers is not None else None,
        "category": spec.category,
        "concurrency": spec.concurrency,
        "repeat": spec.repeat,
        "launch": spec.launch,
        "gpus": spec.gpus,
        "model": spec.model,
        "endpoint": spec.endpoint,
        "api": spec.settings.api,
        "client": spec.settings.client,
        "max_tokens": spec.settings.max_tokens,
        "temperature": spec.settings.temperature,
        "history": spec.settings.history,
        "started_at": window.started_at,
        "finished_at": window.finished_at,
    }


def _client_figures(
    records: Sequence[RequestRecord],
    ok: Sequence[RequestRecord],
    output_tokens: int,
    window: Window,
    gpus: int | None,
) -> dict[str, Any]:
    """Counts, rates and latency distributions from the client's request records."""
    ttfts = [r.ttft_ns / 1e6 for r in ok if r.ttft_ns is not None]
    e2es = [r.e2e_ns / 1e6 for r in ok if r.e2e_ns is not None]
    tpots = [
        value
        for r in ok
        if r.ttft_ns is not None
        and r.e2e_ns is not None
        and r.output_tokens is not None
        and (value := tpot_ms(r.e2e_ns / 1e6, r.ttft_ns / 1e6, r.output_tokens)) is not None
    ]
    gaps = [
        (later - earlier) / 1e6
        for r in ok
        for earlier, later in zip(r.chunk_offsets_ns, r.chunk_offsets_ns[1:], strict=False)
    ]
    throughput = output_tok_s(output_tokens, window.duration_s)
    # Records of an older specbench have no duration: their E2E is the closest bound.
    durations = [
        r.duration_ns if r.duration_ns is not None else r.e2e_ns
        for r in records
        if r.duration_ns is not None or r.e2e_ns is not None
    ]
    return {
        "num_conversations": len({r.question_id for r in records}),
        "num_requests": len(records),
        "num_failed": len(records) - len(ok),
        "duration_s": window.duration_s,
        "input_tokens": sum(r.input_tokens or 0 for r in ok),
        "output_tokens": output_tokens,
        "output_tok_s": throughput,
        "output_tok_s_per_gpu": per_gpu(throughput, gpus),
        "request_per_s": len(ok) / window.duration_s,
        "ttft_ms": distribution(ttfts),
        "tpot_ms": distribution(tpots),
        "e2e_ms": distribution(e2es),
        "step_gap_ms": distribution(gaps),
        "num_skipped_turns": sum(r.error_type == SKIPPED_AFTER_FAILED_TURN for r in records),
        "achieved_concurrency": achieved_concurrency(
            (d for d in durations if d is not None), window.duration_s
        ),
    }


def _server_figures(
    before: MetricsSnapshot,
    after: MetricsSnapshot,
    output_tokens: int,
    prefix_cache: PrefixCacheOutcome | None,
) -> dict[str, Any]:
    """The server's counter deltas over the window, and the prefix-cache reset's outcome."""
    generation_tokens = counter_delta(before, after, GENERATION_TOKENS)
    cache_queries = counter_delta(before, after, PREFIX_CACHE_QUERIES)
    cache_hits = counter_delta(before, after, PREFIX_CACHE_HITS)
    prefix_cache = prefix_cache or PrefixCacheOutcome(reset=None, detail=None)
    return {
        "server_generation_tokens": generation_tokens,
        "server_prompt_tokens": counter_delta(before, after, PROMPT_TOKENS),
        "server_preemptions": counter_delta(before, after, PREEMPTIONS),
        "generation_tokens_mismatch": token_count_mismatch(output_tokens, generation_tokens),
        "prefix_cache_reset": prefix_cache.reset,
        "prefix_cache_reset_detail": prefix_cache.detail,
        "server_prefix_cache_queries": cache_queries,
        "server_prefix_cache_hits": cache_hits,
        "prefix_cache_hit_rate": prefix_cache_hit_rate(cache_hits, cache_queries),
    }


def _batch_figures(
    records: Sequence[RequestRecord],
    before: MetricsSnapshot,
    after: MetricsSnapshot,
    samples: Sequence[WindowSample],
    window: Window,
) -> dict[str, Any]:
    """What the server's batches were: the running batch over time, and the drafts per
    verify step (on average from the counters, per step from `detailed` requests)."""
    batch = running_batch(((s.t_s, s.num_requests_running) for s in samples), window.duration_s)
    drafts = counter_delta(before, after, SPEC_DRAFTS)
    draft_tokens = counter_delta(before, after, SPEC_DRAFT_TOKENS) or 0
    return {
        "running_batch_mean": batch.mean,
        "running_batch_samples": batch.samples,
        "effective_k": effective_k(draft_tokens, drafts) if drafts is not None else None,
        "per_step_drafted_counts": per_step_drafted_counts(r.spec_decode for r in records),
    }


def _acceptance_figures(
    records: Sequence[RequestRecord],
    before: MetricsSnapshot,
    after: MetricsSnapshot,
    spec: CellSpec,
) -> dict[str, Any]:
    """Acceptance over the window, per category, the official AL and the cuts."""
    acceptance = spec_decode_summary(before, after)
    if not before.has_spec_decode:
        return {
            "spec_decode": acceptance,
            "per_category": category_acceptance(records, speculating=False),
            "official_acceptance": None,
            "acceptance_cuts": None,
        }
    positions = len(acceptance.num_accepted_tokens_per_position) if acceptance else None
    return {
        "spec_decode": acceptance,
        "per_category": with_official(category_acceptance(records, speculating=True), records),
        "official_acceptance": official_summary(cell_official(records)),
        "acceptance_cuts": cell_cuts(records, spec.settings.max_tokens, positions),
    }


def with_official(
    per_category: dict[str, CategoryAcceptance], records: Sequence[RequestRecord]
) -> dict[str, CategoryAcceptance]:
    """`per_category` with the official SPEED-Bench AL of each category added beside."""
    official = cell_official(records)
    if official is None:
        return per_category
    return {
        name: category.model_copy(
            update={
                "official_acceptance_length": official.official.per_category.get(name),
                "official_trimmed_acceptance_length": official.trimmed.per_category.get(name),
                "num_questions": official.official.questions_per_category.get(name),
                "official_merged_chunks": official.merged_per_category.get(name, 0),
            }
        )
        for name, category in per_category.items()
    }


def with_precision(
    summary: CellSummary, records: Sequence[RequestRecord], spec: CellSpec
) -> CellSummary:
    """Add the steady-state throughput and the bootstrap precision (measure.precision).

    A precision-targeted cell reports the steady-state throughput as its
    output_tok_s(_per_gpu): with fewer conversations, the drain tail would otherwise be a
    larger share of the window and bias it low.
    """
    steady = steady_state_window(records)
    update: dict[str, object] = {"full_window_output_tok_s_per_gpu": summary.output_tok_s_per_gpu}
    steady_per_gpu = None
    if steady is not None:
        seconds, tokens = steady
        steady_per_gpu = per_gpu(output_tok_s(tokens, seconds), spec.gpus)
        update["steady_state_duration_s"] = seconds
        update["steady_state_output_tok_s_per_gpu"] = steady_per_gpu
    if spec.precision is not None and steady is not None:
        update["output_tok_s"] = output_tok_s(steady[1], steady[0])
        update["output_tok_s_per_gpu"] = steady_per_gpu
        ok_in_window = sum(
            1 for r in records if r.ok and r.start_ns + (r.e2e_ns or 0) <= steady[0] * 1e9
        )
        update["request_per_s"] = ok_in_window / steady[0]
        update["throughput_window"] = "steady_state"
    reported = update.get("output_tok_s_per_gpu", summary.output_tok_s_per_gpu)
    if reported is None:  # no GPU count (an attached endpoint): the per-server rate
        reported = update.get("output_tok_s", summary.output_tok_s)
    intervals = bootstrap_intervals(
        records,
        spec.concurrency,
        seed=spec.order_seed,
        throughput_value=float(reported),  # type: ignore[arg-type]
    )
    if spec.gpus is None and "output_tok_s_per_gpu" in intervals:
        # The same relative interval, on the rate it was computed for.
        intervals["output_tok_s"] = intervals.pop("output_tok_s_per_gpu")
    used = summary.num_conversations
    available = max(spec.conversations_available, used)
    if spec.precision is None:
        rule: StopReason = "all_conversations"
    elif used < available:
        rule = "precision_reached"
    elif precise_enough(intervals, spec.precision):
        rule = "all_conversations_precision_reached"
    else:
        rule = "all_conversations_without_precision"
    update["precision"] = CellPrecision(
        target=spec.precision,
        min_conversations=spec.min_conversations,
        stopping_rule=rule,
        conversations_used=used,
        conversations_available=available,
        figures={
            name: FigurePrecision(
                value=i.value,
                ci_low=i.low,
                ci_high=i.high,
                relative_half_width=i.relative_half_width,
            )
            for name, i in intervals.items()
        },
        bootstrap_resamples=BOOTSTRAP_RESAMPLES,
        seed=spec.order_seed,
    )
    return summary.model_copy(update=update)
