"""Standard errors of a cell's gated figures, estimated from within the run.

A stratified cluster bootstrap: the successful turns are grouped by conversation (turns of
one conversation are not independent), conversations by category (the stratum: a cell's
workload fixes how many of each category it measures); every resample draws, inside each
category, as many conversations as it holds, with replacement (seeded). A figure's
standard error is the sample standard deviation (ddof 1) of its value over the resamples,
times √(n / (n − 1)) for n the conversations of the smallest category it draws from (the
bootstrap's small-sample bias: with 10 conversations it is 5% low).
It is the noise of the figure over another draw of conversations and of their outputs, so
it also bounds the noise of a rerun on the same prompts (which keeps the prompts fixed:
the estimate is conservative when prompts differ a lot from one another).

Figures (same names as the summary and the gate; values in the figure's units):

- `acceptance_length` (step-weighted, 1 + Σ accepted / Σ steps), `draft_acceptance_rate`
  and `per_position_acceptance_<i>` (Σ steps with ≥ i accepted / Σ steps): from the
  per-request spec-decode objects when every turn carries one, else from chunk sizes (a
  decode chunk of k tokens is a step with k − 1 accepted). The reported figure comes from
  the server's counters; its error is the resampled estimate's relative error times it.
- `official_acceptance_length` (mean over questions of Σ tokens / Σ chunks).
- `output_tok_s_per_gpu` (and `output_tok_s`): the relative error of Σ output tokens /
  makespan, the resampled conversations run through `concurrency` slots in a shuffled
  order (the drain tail, when a last conversation runs alone, is a large share of the
  noise of a small cell), times the reported figure; for a steady-state window, of the
  slot-time ratio Σ output tokens / Σ E2E (as `measure.precision`).
- `ttft_ms_*`, `e2e_ms_*`, `tpot_ms_*` for median, p90, p99: the weighted quantile of the
  resampled turns.
- per category: `acceptance_length` (the definition the summary stores for the category:
  step-weighted from per-request objects, or the mean over requests of tokens per chunk)
  and `official_acceptance_length`.

Below `MIN_CONVERSATIONS` conversations there is no noise estimate (the resamples repeat
too few distinct conversations to mean anything): the figures are left out and `note` says
why.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from specbench.client.record import RequestRecord
from specbench.measure.official_al import cell_official
from specbench.metrics.per_request import chunk_acceptance_length
from specbench.stats.bootstrap import draw_counts, makespans, resample_draws, resampled_quantiles
from specbench.stats.standard_errors import (
    ratio_standard_error,
    scaled_error,
    small_sample_factor,
)
from specbench.store.summary import CellErrors, CellSummary

#: Conversations below which a cell has no noise estimate.
MIN_CONVERSATIONS = 5
#: Resamples of the error bootstrap (the standard error moves by ~ 1/√(2R) ≈ 3.5% of itself).
ERROR_RESAMPLES = 400
#: Name of the rate at draft position i (1-based), as the results columns spell it.
PER_POSITION_PREFIX = "per_position_acceptance_"
QUANTILES = (("median", 0.5), ("p90", 0.9), ("p99", 0.99))


class _Conversations:
    """Per-conversation sums and per-turn values, columns ordered by category."""

    def __init__(self, records: Sequence[RequestRecord]) -> None:
        groups: dict[str, list[RequestRecord]] = defaultdict(list)
        category_of: dict[str, str] = {}
        for r in records:
            if r.ok and r.e2e_ns is not None:
                groups[r.question_id].append(r)
                category_of.setdefault(r.question_id, r.category)
        self.ids = sorted(groups, key=lambda q: (category_of[q], q))
        self.groups = [groups[q] for q in self.ids]
        self.categories = [category_of[q] for q in self.ids]
        self.strata = [
            sum(1 for c in self.categories if c == name) for name in sorted(set(self.categories))
        ]

    def column(self, value: Callable[[list[RequestRecord]], float]) -> np.ndarray:
        return np.array([value(g) for g in self.groups], dtype=float)

    def in_category(self, category: str) -> np.ndarray:
        return np.array([c == category for c in self.categories], dtype=float)


def _spec_steps(group: list[RequestRecord], per_request: bool, depth: int) -> np.ndarray:
    """[steps, accepted, drafted, steps with ≥ 1 accepted, …, ≥ depth accepted] of turns."""
    row = np.zeros(3 + depth)
    for r in group:
        if per_request:
            spec = r.spec_decode or {}
            row[0] += int(spec.get("num_spec_steps") or 0)
            row[1] += int(spec.get("num_accepted_draft_tokens") or 0)
            row[2] += int(spec.get("num_draft_tokens") or 0)
            histogram = [int(h) for h in spec.get("acceptance_histogram") or ()]
            for i in range(1, min(depth, len(histogram) - 1) + 1):
                row[2 + i] += sum(histogram[i:])
        else:
            decode = [n for n in r.chunk_tokens[1:] if n > 0]
            row[0] += len(decode)
            row[1] += sum(n - 1 for n in decode)
            for i in range(1, depth + 1):
                row[2 + i] += sum(1 for n in decode if n - 1 >= i)
    return row


def _acceptance(
    data: _Conversations, times: np.ndarray, summary: CellSummary, figures: dict[str, float]
) -> None:
    """AL, draft acceptance rate and per-position rates (step-weighted)."""
    spec = summary.spec_decode
    if spec is None:
        return
    records = [r for g in data.groups for r in g]
    per_request = all(r.spec_decode and "num_spec_steps" in r.spec_decode for r in records)
    depth = len(spec.per_position_acceptance)
    rows = np.array([_spec_steps(g, per_request, depth) for g in data.groups])
    steps, accepted, drafted = rows[:, 0], rows[:, 1], rows[:, 2]
    if steps.sum() == 0:
        return
    estimate = 1 + accepted.sum() / steps.sum()
    se = ratio_standard_error(times, accepted, steps)  # AL − 1 and AL share it
    if (found := scaled_error(se, estimate, spec.acceptance_length)) is not None:
        figures["acceptance_length"] = found
    if per_request and drafted.sum() > 0:
        rate = accepted.sum() / drafted.sum()
        found = scaled_error(
            ratio_standard_error(times, accepted, drafted), rate, spec.draft_acceptance_rate
        )
        if found is not None:
            figures["draft_acceptance_rate"] = found
    for i, reported in enumerate(spec.per_position_acceptance, start=1):
        at_least = rows[:, 2 + i]
        found = scaled_error(
            ratio_standard_error(times, at_least, steps), at_least.sum() / steps.sum(), reported
        )
        if found is not None:
            figures[f"{PER_POSITION_PREFIX}{i}"] = found


def _categories(
    data: _Conversations,
    times: np.ndarray,
    summary: CellSummary,
    per_question: dict[str, float] | None,
) -> dict[str, dict[str, float]]:
    """Per category: its stored AL's error and its official AL's error."""
    result: dict[str, dict[str, float]] = {}
    for name, category in summary.per_category.items():
        mask = data.in_category(name)
        errors: dict[str, float] = {}
        if category.acceptance_length is not None:
            if category.acceptance_source == "per_request_metrics":
                rows = np.array([_spec_steps(g, True, 0) for g in data.groups])
                se = ratio_standard_error(times, rows[:, 1] * mask, rows[:, 0] * mask)
            else:  # mean over requests of each request's tokens per chunk
                values = [
                    [al for r in g if (al := chunk_acceptance_length(r.chunk_tokens)) is not None]
                    for g in data.groups
                ]
                sums = np.array([sum(v) for v in values]) * mask
                counts = np.array([len(v) for v in values], dtype=float) * mask
                se = ratio_standard_error(times, sums, counts)
            if se is not None:
                errors["acceptance_length"] = se
        if category.official_acceptance_length is not None and per_question is not None:
            se = _official_se(data, times, mask, per_question)
            if se is not None:
                errors["official_acceptance_length"] = se
        if errors:
            result[name] = errors
    return result


def _official_se(
    data: _Conversations, times: np.ndarray, mask: np.ndarray, per_question: dict[str, float]
) -> float | None:
    """Error of the mean over (masked) questions of each question's official AL."""
    values = np.array([per_question.get(q, 0.0) for q in data.ids])
    present = np.array([q in per_question for q in data.ids], dtype=float) * mask
    return ratio_standard_error(times, values * present, present)


def _throughput_se(
    data: _Conversations, times: np.ndarray, draws: np.ndarray, summary: CellSummary
) -> float | None:
    """Relative standard error of the reported throughput.

    Full window (every conversation, drain tail included): Σ tokens / makespan of the
    resampled conversations run through `concurrency` slots in a shuffled order, so the
    tail's share (a last conversation that runs alone) is part of the noise. Steady-state
    window: the slot-time ratio Σ tokens / Σ conversation time (all slots busy).
    """
    tokens = data.column(lambda g: sum(r.output_tokens or 0 for r in g))
    if summary.throughput_window == "steady_state":
        busy_s = data.column(lambda g: sum(r.e2e_ns or 0 for r in g) / 1e9)
        if busy_s.sum() <= 0:
            return None
        se = ratio_standard_error(times, tokens, busy_s)
        return None if se is None else se / (tokens.sum() / busy_s.sum())
    occupied_s = data.column(
        lambda g: (
            (
                max(r.start_ns + (r.duration_ns or r.e2e_ns or 0) for r in g)
                - min(r.start_ns for r in g)
            )
            / 1e9
        )
    )
    rates = tokens[draws].sum(axis=1) / makespans(occupied_s[draws], summary.concurrency)
    return float(np.std(rates, ddof=1) / np.mean(rates))


def _timing(
    data: _Conversations,
    times: np.ndarray,
    draws: np.ndarray,
    summary: CellSummary,
    figures: dict[str, float],
) -> None:
    """Throughput (relative error carried onto the reported figure) and latency quantiles."""
    relative = _throughput_se(data, times, draws, summary)
    for name in ("output_tok_s", "output_tok_s_per_gpu"):
        reported = getattr(summary, name)
        if relative is not None and reported is not None:
            figures[name] = relative * abs(reported)
    samples: dict[str, list[np.ndarray]] = {
        "ttft_ms": [
            np.array([r.ttft_ns / 1e6 for r in g if r.ttft_ns is not None]) for g in data.groups
        ],
        "e2e_ms": [np.array([(r.e2e_ns or 0) / 1e6 for r in g]) for g in data.groups],
        "tpot_ms": [
            np.array(
                [
                    ((r.e2e_ns or 0) - r.ttft_ns) / 1e6 / ((r.output_tokens or 0) - 1)
                    for r in g
                    if r.ttft_ns is not None and (r.output_tokens or 0) >= 2
                ]
            )
            for g in data.groups
        ],
    }
    for name, values in samples.items():
        if sum(len(v) for v in values) < 2:
            continue
        resampled = resampled_quantiles(values, times, [q for _, q in QUANTILES])
        for (stat, _), stats in zip(QUANTILES, resampled, strict=True):
            figures[f"{name}_{stat}"] = float(np.std(stats, ddof=1))


def cell_errors(
    records: Sequence[RequestRecord],
    summary: CellSummary,
    *,
    seed: int = 0,
    resamples: int = ERROR_RESAMPLES,
) -> CellErrors:
    """Standard errors of the summary's gated figures from its records (see module doc)."""
    data = _Conversations(records)
    empty = CellErrors(num_conversations=len(data.ids), resamples=resamples, seed=seed)
    if len(data.ids) < MIN_CONVERSATIONS:
        return empty.model_copy(
            update={
                "note": f"no noise estimate: {len(data.ids)} conversations (< {MIN_CONVERSATIONS})"
            }
        )
    draws = resample_draws(data.strata, resamples, np.random.default_rng(seed))
    times = draw_counts(draws, len(data.ids))
    figures: dict[str, float] = {}
    _acceptance(data, times, summary, figures)
    per_question = None
    official = summary.official_acceptance
    if official is not None and official.acceptance_length is not None:
        cell = cell_official([r for g in data.groups for r in g])
        per_question = cell.official.per_question if cell is not None else None
    if per_question:
        se = _official_se(data, times, np.ones(len(data.ids)), per_question)
        if se is not None:
            figures["official_acceptance_length"] = se
    _timing(data, times, draws, summary, figures)
    categories = _categories(data, times, summary, per_question)
    overall = small_sample_factor(min(data.strata))
    sizes = dict(zip(sorted(set(data.categories)), data.strata, strict=True))
    return empty.model_copy(
        update={
            "category_conversations": sizes,
            "figures": {name: se * overall for name, se in figures.items()},
            "categories": {
                name: {
                    figure: se * small_sample_factor(sizes[name]) for figure, se in found.items()
                }
                for name, found in categories.items()
            },
        }
    )
