"""`specbench data inspect`: what a dataset holds, per category, before anything is sent.

Works on data that still has SPEED-Bench placeholders: it counts them instead of refusing.
Prompt length is the text of all user turns of a conversation (in characters), and, with a
tokenizer, the chat-templated prompt of its last turn without earlier answers (in tokens).
Placeholder rows are left out of the lengths: their text is not the prompt that will run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table

from specbench.data import speed_bench
from specbench.data.context import TokenCounter
from specbench.data.conversation import Conversation
from specbench.data.loader import read_dataset
from specbench.data.selection import filter_categories


@dataclass(frozen=True)
class Quantiles:
    """Distribution summary of one length measure; quantiles interpolate linearly."""

    minimum: int
    p50: float
    p90: float
    maximum: int
    mean: float


def quantile(sorted_values: Sequence[int], fraction: float) -> float:
    """Linear-interpolation quantile (numpy's default) of already sorted values."""
    if not sorted_values:
        raise ValueError("quantile of no values")
    position = (len(sorted_values) - 1) * fraction
    low, high = math.floor(position), math.ceil(position)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def summarize(values: Sequence[int]) -> Quantiles:
    """Min, median, 90th percentile, max and mean of a non-empty sequence."""
    ordered = sorted(values)
    return Quantiles(
        minimum=ordered[0],
        p50=quantile(ordered, 0.5),
        p90=quantile(ordered, 0.9),
        maximum=ordered[-1],
        mean=sum(ordered) / len(ordered),
    )


@dataclass(frozen=True)
class CategoryStats:
    """One row of the inspect table."""

    category: str
    rows: int
    multi_turn: int
    placeholders: int
    prompt_chars: Quantiles | None
    prompt_tokens: Quantiles | None

    @property
    def multi_turn_fraction(self) -> float:
        """Share of rows with more than one user turn, as a fraction."""
        return self.multi_turn / self.rows


@dataclass(frozen=True)
class DatasetReport:
    """What `inspect_dataset` found: per-category rows plus an overall row."""

    spec: str
    source: str
    config: str | None
    revision: str | None
    nominal_context_tokens: int | None
    tokenizer: str | None
    categories: tuple[CategoryStats, ...]
    overall: CategoryStats
    warnings: tuple[str, ...] = ()


def _stats(
    category: str, conversations: Sequence[Conversation], counter: TokenCounter | None
) -> CategoryStats:
    real = [c for c in conversations if not speed_bench.is_placeholder(c)]
    chars = summarize([sum(map(len, c.turns)) for c in real]) if real else None
    tokens = summarize([counter.prompt_tokens(c) for c in real]) if real and counter else None
    return CategoryStats(
        category=category,
        rows=len(conversations),
        multi_turn=sum(len(conversation.turns) > 1 for conversation in conversations),
        placeholders=len(conversations) - len(real),
        prompt_chars=chars,
        prompt_tokens=tokens,
    )


def inspect_dataset(
    spec: str,
    *,
    revision: str | None = None,
    categories: Sequence[str] = (),
    tokenizer: str | None = None,
) -> DatasetReport:
    """Load a dataset (placeholders allowed) and summarize it per category."""
    raw = read_dataset(spec, revision=revision)
    if raw.config is not None:
        speed_bench.check_categories(raw.config, categories)
    rows = filter_categories(raw.conversations, categories, where=raw.source)
    counter = TokenCounter(tokenizer) if tokenizer else None
    groups: dict[str, list[Conversation]] = {}
    for conversation in rows:
        groups.setdefault(conversation.category, []).append(conversation)
    order = (
        [c for c in speed_bench.known_categories(raw.config) if c in groups]
        if raw.config
        else sorted(groups)
    )
    return DatasetReport(
        spec=raw.spec,
        source=raw.source,
        config=raw.config,
        revision=raw.revision,
        nominal_context_tokens=raw.nominal_context_tokens,
        tokenizer=tokenizer,
        categories=tuple(_stats(category, groups[category], counter) for category in order),
        overall=_stats("all", rows, counter),
        warnings=raw.warnings,
    )


def _length_cells(quantiles: Quantiles | None) -> list[str]:
    if quantiles is None:
        return ["-", "-", "-"]
    return [f"{quantiles.p50:,.0f}", f"{quantiles.p90:,.0f}", f"{quantiles.maximum:,}"]


def report_heading(report: DatasetReport) -> str:
    """The dataset spec (and Hub revision) the report is about."""
    return report.spec + (f" @ {report.revision[:12]}" if report.revision else "")


def report_notes(report: DatasetReport) -> list[str]:
    """Lines printed under the table: the source read, the nominal length, placeholders.

    Lines of their own rather than a table caption: a caption wraps at the table's width,
    which would break a long source path (and each fact) at a place the path decides.
    """
    notes = [f"source: {report.source}"]
    if report.nominal_context_tokens:
        notes.append(f"nominal prompt length {report.nominal_context_tokens:,} o200k tokens")
    if report.overall.placeholders:
        notes.append(
            f"{report.overall.placeholders} placeholder rows must be prepared before a run "
            "(specbench data prepare CONFIG --output DIR, then run --data-dir DIR)"
        )
    return notes


def report_table(report: DatasetReport) -> Table:
    """The report as a rich table: one row per category, then the overall row."""
    table = Table()
    table.add_column("category", no_wrap=True)
    table.add_column("rows", justify="right")
    table.add_column("multi-\nturn", justify="right", no_wrap=True)
    table.add_column("place-\nholders", justify="right")
    units = ["chars", "tokens"] if report.tokenizer else ["chars"]
    for unit in units:
        for statistic in ("p50", "p90", "max"):
            table.add_column(f"{unit}\n{statistic}", justify="right")
    for stats in (*report.categories, report.overall):
        cells = [
            stats.category,
            f"{stats.rows:,}",
            f"{stats.multi_turn:,} ({stats.multi_turn_fraction:.0%})",
            f"[red]{stats.placeholders:,}[/]" if stats.placeholders else "0",
            *_length_cells(stats.prompt_chars),
        ]
        if report.tokenizer:
            cells += _length_cells(stats.prompt_tokens)
        table.add_row(*cells, end_section=stats is report.categories[-1])
    return table
