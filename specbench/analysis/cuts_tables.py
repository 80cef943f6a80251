"""Report tables of the acceptance cuts (`summary.acceptance_cuts`): AL by output position
and thinking vs answer AL per domain.

Cells of one config and workload are pooled by summing their steps and accepted drafts
per bin (or per span): the step-weighted AL of the pooled steps, never a mean of ALs. A
cell whose cut was refused stays out of the pool and is named in a footnote; a config
with no usable cell prints "n/a" with the reason. Cells written before the cuts were
recorded get them recomputed from their `requests.jsonl` (the run's own function,
`measure.cuts.cell_cuts`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from specbench import store
from specbench.analysis.table import Table
from specbench.analysis.tables import TableUnavailable
from specbench.analysis.wording import AL_NAMES
from specbench.common.text import fixed
from specbench.data.categories import category_name
from specbench.measure.cuts import cell_cuts
from specbench.results.loading import LoadedCell
from specbench.store.layout import cell_key
from specbench.store.summary import AcceptanceCuts, CutGroup

if TYPE_CHECKING:
    pass

OVERALL = "overall"
_SOURCES = {
    "per_step_metrics": "exact (vLLM per-step arrays)",
    "chunks": "estimate (streamed chunks)",
}


@dataclass(slots=True)
class _Pool:
    """Steps and accepted drafts summed over cells, and what was left out."""

    steps: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    thinking: list[int] = field(default_factory=lambda: [0, 0])
    answer: list[int] = field(default_factory=lambda: [0, 0])
    thinking_tokens: int = 0
    answer_tokens: int = 0
    with_span: int = 0
    sources: set[str] = field(default_factory=set)
    cells: int = 0
    refusals: list[str] = field(default_factory=list)
    span_refusals: list[str] = field(default_factory=list)

    def add(self, group: CutGroup, where: str) -> None:
        if group.refusal is not None or group.position_bins is None:
            self.refusals.append(f"{where}: {group.refusal}")
            return
        self.cells += 1
        self.sources.add(group.source or "?")
        for cut in group.position_bins:
            pooled = self.steps.setdefault((cut.start_token, cut.end_token), [0, 0])
            pooled[0] += cut.num_steps
            pooled[1] += cut.num_accepted_tokens
        if group.thinking is None or group.answer is None:
            self.span_refusals.append(f"{where}: {group.thinking_refusal}")
            return
        self.thinking[0] += group.thinking.num_steps
        self.thinking[1] += group.thinking.num_accepted_tokens
        self.answer[0] += group.answer.num_steps
        self.answer[1] += group.answer.num_accepted_tokens
        self.thinking_tokens += group.thinking_tokens
        self.answer_tokens += group.answer_tokens
        self.with_span += group.num_requests_with_span

    @property
    def source(self) -> str:
        if not self.sources:
            return "n/a"
        return _SOURCES["chunks"] if "chunks" in self.sources else _SOURCES["per_step_metrics"]

    @property
    def definition(self) -> str:
        """The AL it gives (`wording.AL_NAMES`): step-weighted from per-step arrays, else an
        estimate from chunks."""
        return "chunk_estimate" if "chunks" in self.sources else "step_weighted"


#: What an AL from streamed chunks is, said wherever one is printed.
CHUNK_ESTIMATE_NOTE = (
    "Chunk estimate (Source says where): each streamed chunk taken as one verify step, from "
    "the client's reads: neither the step-weighted AL of vLLM's counters nor the official AL."
)


def _titled(title: str, pools: Sequence[_Pool]) -> tuple[str, list[str]]:
    """The title with the AL definition its rows are in, and the note an estimate needs."""
    kinds = sorted({pool.definition for pool in pools if pool.cells})
    if kinds == ["step_weighted"] or not kinds:
        return f"{title} ({AL_NAMES['step_weighted']})", []
    if kinds == ["chunk_estimate"]:
        return f"{title} ({AL_NAMES['chunk_estimate']})", [CHUNK_ESTIMATE_NOTE]
    both = f"{AL_NAMES['step_weighted']} where exact, {AL_NAMES['chunk_estimate']} elsewhere"
    return f"{title} ({both})", [CHUNK_ESTIMATE_NOTE]


def _al(steps: int, accepted: int) -> float | None:
    """1 + accepted / steps (step-weighted, bonus included); None without steps."""
    return None if steps == 0 else 1.0 + accepted / steps


def _pools(cells: Sequence[LoadedCell], labels: Sequence[str]) -> dict[tuple[str, str, str], _Pool]:
    """(label, workload, category or overall) → pooled cuts, over concurrencies and repeats."""
    pools: dict[tuple[str, str, str], _Pool] = defaultdict(_Pool)
    for cell in cells:
        summary = cell.summary
        if cell.label not in labels or summary.spec_decode is None:
            continue
        where = cell_key(
            cell.label, summary.workload, summary.concurrency, summary.repeat, summary.launch
        )
        cuts = summary.acceptance_cuts or _recomputed(cell)
        if cuts is None:
            pools[(cell.label, summary.workload, OVERALL)].refusals.append(
                f"{where}: no acceptance_cuts in summary.json and no requests.jsonl to "
                "recompute them from"
            )
            continue
        pools[(cell.label, summary.workload, OVERALL)].add(cuts.overall, where)
        for name, group in cuts.per_category.items():
            pools[(cell.label, summary.workload, name)].add(group, where)
    return pools


def _recomputed(cell: LoadedCell) -> AcceptanceCuts | None:
    """Cuts of a cell written before they were recorded, from its `requests.jsonl`."""
    path = cell.path.parent / store.REQUESTS
    counters = cell.summary.spec_decode
    if not path.is_file() or counters is None:
        return None
    return cell_cuts(
        list(store.read_records(path)),
        cell.summary.max_tokens,
        len(counters.num_accepted_tokens_per_position) or None,
    )


def _bin_name(start: int, end: int) -> str:
    return f"{start}\u2013{end - 1}"


def al_by_position(cells: Sequence[LoadedCell], labels: Sequence[str]) -> Table:
    """One row per speculative config × workload: the step-weighted AL of each position bin."""
    import pandas as pd

    pools = _pools(cells, labels)
    overall = {key: pool for key, pool in pools.items() if key[2] == OVERALL}
    if not overall:
        raise TableUnavailable("AL by output position: no speculative cell")
    bins = sorted({edges for pool in overall.values() for edges in pool.steps})
    if not bins:
        reasons = [r for pool in overall.values() for r in pool.refusals]
        raise TableUnavailable(
            "AL by output position: n/a, "
            + (reasons[0] if reasons else "no cell has position bins")
        )
    records: list[dict[str, object]] = []
    rows: list[tuple[str, ...]] = []
    notes: list[str] = []
    for (label, workload, _), pool in sorted(overall.items()):
        values = []
        for edges in bins:
            steps, accepted = pool.steps.get(edges, [0, 0])
            al = _al(steps, accepted)
            values.append(fixed(al, 2))
            records.append(
                {
                    "label": label,
                    "workload": workload,
                    "start_token": edges[0],
                    "end_token": edges[1],
                    "acceptance_length": al,
                    "num_steps": steps,
                    "num_accepted_tokens": accepted,
                    "source": pool.source,
                    "al_definition": pool.definition,
                    "cells": pool.cells,
                }
            )
        rows.append((label, workload, *values, pool.source if pool.cells else "n/a"))
        for reason in pool.refusals:
            notes.append(f"Left out: {reason}")
    title, estimate = _titled("Acceptance length by output position", list(overall.values()))
    notes[:0] = [
        "AL (1 + Σaccepted / Σsteps) of the verify steps whose first token falls in each "
        "output-position bin, pooled over every concurrency and repeat of a config; \u2014 "
        "where no step started in the bin (outputs ended before it).",
        *estimate,
    ]
    return Table(
        name="al_by_position",
        title=title,
        columns=("Config", "Workload", *(_bin_name(*edges) for edges in bins), "Source"),
        rows=tuple(rows),
        data=pd.DataFrame.from_records(records),
        footnotes=tuple(notes),
    )


def thinking_vs_answer(cells: Sequence[LoadedCell], labels: Sequence[str]) -> Table:
    """Per domain (then Overall): thinking AL and answer AL of each speculative config."""
    import pandas as pd

    pools = _pools(cells, labels)
    keys = sorted({(label, workload) for label, workload, _ in pools})
    if not keys:
        raise TableUnavailable("Thinking vs answer AL: no speculative cell")
    if not any(pool.with_span for pool in pools.values()):
        reasons = [r for pool in pools.values() for r in pool.span_refusals + pool.refusals]
        raise TableUnavailable(
            "Thinking vs answer AL: n/a, " + (reasons[0] if reasons else "no thinking span found")
        )
    categories = [*sorted({name for _, _, name in pools} - {OVERALL}), OVERALL]
    records: list[dict[str, object]] = []
    rows: list[tuple[str, ...]] = []
    notes: list[str] = []
    for name in categories:
        row = [category_name(name) if name != OVERALL else "Overall"]
        for label, workload in keys:
            pool = pools.get((label, workload, name))
            if pool is None:
                row += ["\u2014", "\u2014", "\u2014"]
                continue
            thinking = _al(*pool.thinking)
            answer = _al(*pool.answer)
            share = (
                pool.thinking_tokens / (pool.thinking_tokens + pool.answer_tokens)
                if pool.thinking_tokens + pool.answer_tokens
                else None
            )
            shown = pool.with_span > 0
            row += [
                fixed(thinking, 2) if shown else "n/a",
                fixed(answer, 2) if shown else "n/a",
                f"{share:.0%}" if shown and share is not None else "n/a",
            ]
            records.append(
                {
                    "label": label,
                    "workload": workload,
                    "category": name,
                    "thinking_acceptance_length": thinking,
                    "answer_acceptance_length": answer,
                    "thinking_steps": pool.thinking[0],
                    "answer_steps": pool.answer[0],
                    "thinking_tokens": pool.thinking_tokens,
                    "answer_tokens": pool.answer_tokens,
                    "requests_with_span": pool.with_span,
                    "source": pool.source,
                    "al_definition": pool.definition,
                }
            )
            if not shown:
                reason = (pool.span_refusals or pool.refusals or ["no data"])[0]
                notes.append(f"n/a for {label} {category_name(name)}: {reason}")
        rows.append(tuple(row))
    columns = ["Domain"]
    for label, workload in keys:
        prefix = label if len(keys) == 1 else f"{label} {workload}"
        columns += [f"{prefix} thinking AL", f"{prefix} answer AL", f"{prefix} thinking share"]
    sources = sorted({pool.source for pool in pools.values() if pool.cells})
    title, estimate = _titled(
        "Acceptance length, thinking vs answer, by domain", list(pools.values())
    )
    notes[:0] = estimate
    notes.insert(
        0,
        "AL of the verify steps that started inside the thinking span vs "
        "after it (a step straddling </think> counts as thinking); thinking share = "
        "thinking tokens / output tokens of requests with a span. Source: "
        + ", ".join(sources)
        + ".",
    )
    return Table(
        name="thinking_vs_answer",
        title=title,
        columns=tuple(columns),
        rows=tuple(rows),
        data=pd.DataFrame.from_records(records),
        bold_rows=frozenset({len(rows) - 1}),
        footnotes=tuple(dict.fromkeys(notes)),
    )
