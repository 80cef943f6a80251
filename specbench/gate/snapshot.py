"""A results directory aggregated per cell: each metric's value with its spread over repeats.

A cell here is one server label × dataset folder × concurrency (its repeats collapsed),
keyed `<label>/<dataset folder>/c<concurrency>` as on disk. Values come from the analysis
layer (`aggregate_repeats`): serving metrics are the plain mean over repeats; acceptance
(AL, per-position rates) is pooled from the counters over the repeats (a ratio of sums),
while its `std` is the sample std of the per-repeat values (the run-to-run noise).
Per-category AL of mixed runs is pooled the same way (`pool_category_acceptance`).

A cell measured on several server launches (each summary's `launch`, not its folder) also
keeps each figure's value per launch (`launch_values`): the launch's repeats aggregated as
the cell's are (serving figures the mean over the launch's repeats, acceptance pooled over
them). The gate's launch-level rule (`gate.launches`) compares those.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from specbench.analysis.aggregate import (
    N_REPEATS,
    SUFFIX_MAX,
    SUFFIX_MIN,
    SUFFIX_N,
    SUFFIX_POOLED,
    SUFFIX_STD,
    aggregate_repeats,
    pool_category_acceptance,
)
from specbench.common.errors import SpecbenchError
from specbench.common.model import Frozen
from specbench.metrics.declarations import figure_of, stored
from specbench.results.columns import (
    ACCEPTANCE_LENGTH,
    CATEGORY,
    CONCURRENCY,
    LABEL,
    LAUNCH,
    WORKLOAD,
    position_columns,
)
from specbench.results.frame import category_frame, cells_frame
from specbench.results.loading import FailedCell, LoadedCell, load_cells
from specbench.stats.standard_errors import combined_standard_error
from specbench.store.layout import cell_key_of, point_key
from specbench.store.summary import CellSummary

if TYPE_CHECKING:
    import pandas as pd


class MetricStats(Frozen):
    """One metric of one cell over its repeats."""

    value: float = Field(description="Mean over repeats; acceptance pooled from counters.")
    std: float | None = Field(description="Sample std over repeats (ddof 1); None when n < 2.")
    n: int = Field(description="Repeats that carried this metric.")
    min: float = Field(description="Smallest per-repeat value.")
    max: float = Field(description="Largest per-repeat value.")
    se: float | None = Field(
        default=None,
        description="Standard error of `value`: the repeats' within-run bootstrap errors "
        "(√Σse²/n), or std/√n when that is larger (n ≥ 2). None: not stored (older "
        "results or baseline) or no noise estimate (see se_note).",
    )
    se_note: str | None = Field(
        default=None, description="Why `se` is None although errors were recorded."
    )
    conversations: int | None = Field(
        default=None, description="Conversations behind `se` (fewest of any repeat)."
    )
    df: float | None = Field(
        default=None,
        description="Degrees of freedom of `se`: Σ conversations over repeats − 1 for the "
        "bootstrap error, repeats − 1 when the spread over repeats decided.",
    )
    launch_values: dict[int, float] | None = Field(
        default=None,
        description="Server launch → the figure's value on that launch (its repeats "
        "aggregated as `value` is: mean, acceptance pooled). None: the cell was measured "
        "on one launch (or the file predates launches).",
    )


class CellStats(Frozen):
    """One cell (repeats collapsed) of a results directory."""

    key: str = Field(description="`<label>/<dataset folder>/c<concurrency>`, as on disk.")
    label: str = Field(description="Server configuration name.")
    dataset: str = Field(description="Dataset spec as recorded in the summaries.")
    dataset_dir: str = Field(description="Dataset folder name (path-independent identity).")
    category: str | None = Field(description="The one category measured; None when mixed.")
    concurrency: int = Field(description="Requests in flight.")
    max_tokens: int = Field(description="Output cap per request.")
    temperature: float = Field(description="Sampling temperature.")
    repeats: int = Field(description="Repeats (summaries) collapsed into this cell.")
    launches: int = Field(
        default=1,
        ge=1,
        description="Server launches among those repeats (the summaries' `launch`); 1 in "
        "files saved before launches.",
    )
    metrics: dict[str, MetricStats] = Field(description="Metric name → stats over repeats.")
    categories: dict[str, dict[str, MetricStats]] = Field(
        default_factory=dict,
        description="Category of a mixed run → metric (acceptance_length) → stats.",
    )


class Snapshot(Frozen):
    """Every cell of a results directory, plus the cells that failed (no summary)."""

    cells: dict[str, CellStats] = Field(description="Cell key → stats.")
    failed_cells: dict[str, str] = Field(
        default_factory=dict,
        description="Key of a cell with a failed repeat (failure.json) → `r<N>: reason`; "
        "the cell may still have other repeats in `cells`.",
    )


def failed_cell_key(failure: FailedCell) -> tuple[str, str] | None:
    """(point key, `r<M>` or `l<L>/r<M>`) of a `failure.json`; None outside the layout.

    A failed repeat has no summary to say its launch, so here its folder does (the layout's
    `c<N>/r<M>` for launch 0, `c<N>/l<L>/r<M>` after)."""
    try:
        key = cell_key_of(failure.results_dir, failure.path.parent)
    except SpecbenchError:
        return None
    return key.point, (f"l{key.launch}/" if key.launch else "") + f"r{key.repeat}"


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _stats(row: pd.Series, metric: str, value_column: str | None = None) -> MetricStats | None:
    value = _finite(row.get(value_column or metric))
    n = row.get(metric + SUFFIX_N)
    if value is None or n is None or int(n) == 0:
        return None
    return MetricStats(
        value=value,
        std=_finite(row.get(metric + SUFFIX_STD)),
        n=int(n),
        min=float(row[metric + SUFFIX_MIN]),
        max=float(row[metric + SUFFIX_MAX]),
    )


def _metric_stats(row: pd.Series, metrics: Iterable[str]) -> dict[str, MetricStats]:
    stats: dict[str, MetricStats] = {}
    for metric in metrics:
        figure = figure_of(metric)
        pooled = figure is not None and figure.aggregation == "pooled"
        found = _stats(row, metric, metric + SUFFIX_POOLED if pooled else None)
        if found is not None:
            stats[metric] = found
    return stats


def _category_rows(mixed: Sequence[LoadedCell]) -> pd.DataFrame | None:
    """The per-category rows (with an AL) of mixed-category cells; None when there are none."""
    if not mixed:
        return None
    categories = category_frame(mixed)
    categories = categories[categories[ACCEPTANCE_LENGTH].notna()]
    return None if categories.empty else categories


def _category_stats(categories: pd.DataFrame) -> dict[str, dict[str, dict[str, MetricStats]]]:
    """Cell key → category → {acceptance_length: stats} of per-category rows."""
    by = [LABEL, WORKLOAD, CONCURRENCY, CATEGORY]
    spread = aggregate_repeats(categories, metrics=[ACCEPTANCE_LENGTH]).set_index(by)
    pooled = pool_category_acceptance(categories, by)
    result: dict[str, dict[str, dict[str, MetricStats]]] = {}
    for _, row in pooled.iterrows():
        index = tuple(row[c] for c in by)
        # One row per source/definition: a category measured two ways cannot be pooled.
        merged = {**spread.loc[index].to_dict(), ACCEPTANCE_LENGTH: row[ACCEPTANCE_LENGTH]}
        import pandas as pd

        stats = _stats(pd.Series(merged), ACCEPTANCE_LENGTH)
        if stats is None:
            continue
        key = point_key(str(row[LABEL]), str(row[WORKLOAD]), int(row[CONCURRENCY]))
        result.setdefault(key, {})[str(row[CATEGORY])] = {ACCEPTANCE_LENGTH: stats}
    return result


def _stored_error(
    errors: dict[str, float], name: str, stats: dict[str, MetricStats]
) -> float | None:
    """One repeat's stored standard error of `name`; a derived figure's is propagated from
    its source's (metrics/declarations.py), at the cell's source value."""
    if name in errors:
        return errors[name]
    figure = figure_of(name)
    derived = figure.derived if figure is not None else None
    if derived is None or derived.source not in errors or derived.source not in stats:
        return None
    return derived.standard_error(stats[derived.source].value, errors[derived.source])


def with_errors(
    stats: dict[str, MetricStats], summaries: Sequence[CellSummary], category: str | None
) -> dict[str, MetricStats]:
    """`stats` with each figure's standard error from the repeats' stored errors (a derived
    figure's propagated from its source's).

    `category`: the figures are that category's (summary `standard_errors.categories`).
    """
    errors = [s.standard_errors for s in summaries]
    if not errors or any(e is None for e in errors):
        return stats  # results from before errors were stored: the gate's older rule
    known = [e for e in errors if e is not None]
    counts = [
        e.category_conversations.get(category, e.num_conversations)
        if category
        else e.num_conversations
        for e in known
    ]
    notes = [e.note for e in known if e.note]
    result = {}
    for name, found in stats.items():
        tables = [e.categories.get(category, {}) if category else e.figures for e in known]
        within = [se for t in tables if (se := _stored_error(t, name, stats)) is not None]
        update: dict[str, object] = {"conversations": min(counts)}
        if notes:
            update["se_note"] = notes[0]
        elif len(within) < len(tables):
            update["se_note"] = "no noise estimate: no standard error stored for this figure"
        else:
            se = combined_standard_error(within, found.std)
            from_spread = (
                len(within) >= 2
                and found.std is not None
                and se is not None
                and (se > math.sqrt(sum(x**2 for x in within)) / len(within))
            )
            update["se"] = se
            update["df"] = len(within) - 1 if from_spread else sum(counts) - 1
        result[name] = found.model_copy(update=update)
    return result


def _points_launches(frame: pd.DataFrame) -> dict[str, int]:
    """Point key → the server launches that measured it (distinct summary `launch`)."""
    counts: dict[str, int] = defaultdict(int)
    for _, row in frame[[LABEL, WORKLOAD, CONCURRENCY, LAUNCH]].drop_duplicates().iterrows():
        counts[point_key(str(row[LABEL]), str(row[WORKLOAD]), int(row[CONCURRENCY]))] += 1
    return dict(counts)


LaunchValues = dict[str, dict[str, dict[int, float]]]


def _launch_values(frame: pd.DataFrame, metrics: Sequence[str], keep: set[str]) -> LaunchValues:
    """Point key (of `keep`) → metric → launch → its value over that launch's repeats."""
    values: LaunchValues = {}
    for launch in sorted(frame[LAUNCH].dropna().unique()):
        rows = frame[frame[LAUNCH] == launch]
        for _, row in aggregate_repeats(rows, metrics=list(metrics)).iterrows():
            key = point_key(str(row[LABEL]), str(row[WORKLOAD]), int(row[CONCURRENCY]))
            if key in keep:
                for metric, found in _metric_stats(row, metrics).items():
                    values.setdefault(key, {}).setdefault(metric, {})[int(launch)] = found.value
    return values


def _category_launch_values(categories: pd.DataFrame | None, keep: set[str]) -> LaunchValues:
    """Point key (of `keep`) → category → launch → the category's AL on that launch."""
    values: LaunchValues = {}
    if categories is None:
        return values
    for launch in sorted(categories[LAUNCH].dropna().unique()):
        rows = categories[categories[LAUNCH] == launch]
        for key, by_category in _category_stats(rows).items():
            if key in keep:
                for category, found in by_category.items():
                    value = found[ACCEPTANCE_LENGTH].value
                    values.setdefault(key, {}).setdefault(category, {})[int(launch)] = value
    return values


def _with_launches(
    stats: dict[str, MetricStats], values: dict[str, dict[int, float]]
) -> dict[str, MetricStats]:
    return {
        name: found.model_copy(update={"launch_values": dict(sorted(values[name].items()))})
        if name in values
        else found
        for name, found in stats.items()
    }


def snapshot_cells(cells: Sequence[LoadedCell], failed: Sequence[FailedCell] = ()) -> Snapshot:
    """Aggregate loaded cells (one results directory) into a `Snapshot`."""
    frame = cells_frame(cells)
    # Serving figures (mean over repeats), pooled acceptance, then acceptance means.
    metrics = [m for m in stored("mean") if m in frame.columns]
    metrics += [m for m in stored("pooled") if m in frame.columns]
    metrics += position_columns(frame)
    metrics += [m for m in stored("mean_acceptance") if m in frame.columns]
    aggregated = aggregate_repeats(frame, metrics=metrics)
    category_rows = _category_rows([c for c in cells if c.summary.category is None])
    per_category = _category_stats(category_rows) if category_rows is not None else {}
    launches = _points_launches(frame)
    several = {key for key, count in launches.items() if count >= 2}
    launch_values = _launch_values(frame, metrics, several)
    category_launch_values = _category_launch_values(category_rows, several)
    summaries = {
        point_key(c.summary.label, c.summary.workload, c.summary.concurrency): c.summary
        for c in cells
    }
    repeats: dict[str, list[CellSummary]] = defaultdict(list)
    for c in cells:
        repeats[point_key(c.summary.label, c.summary.workload, c.summary.concurrency)].append(
            c.summary
        )
    result: dict[str, CellStats] = {}
    for _, row in aggregated.iterrows():
        key = point_key(str(row[LABEL]), str(row[WORKLOAD]), int(row[CONCURRENCY]))
        summary = summaries[key]
        result[key] = CellStats(
            key=key,
            label=str(row[LABEL]),
            dataset=summary.dataset,
            dataset_dir=str(row[WORKLOAD]),
            category=summary.category,
            concurrency=summary.concurrency,
            max_tokens=summary.max_tokens,
            temperature=summary.temperature,
            repeats=int(row[N_REPEATS]),
            launches=launches.get(key, 1),
            metrics=_with_launches(
                with_errors(_metric_stats(row, metrics), repeats[key], None),
                launch_values.get(key, {}),
            ),
            categories={
                name: _with_launches(
                    with_errors(stats, repeats[key], name),
                    {ACCEPTANCE_LENGTH: category_launch_values[key][name]}
                    if name in category_launch_values.get(key, {})
                    else {},
                )
                for name, stats in per_category.get(key, {}).items()
            },
        )
    failures: dict[str, str] = {}
    for failure in failed:
        found = failed_cell_key(failure)
        if found is not None:
            point, where = found
            failures.setdefault(point, f"{where}: {failure.reason}")
    return Snapshot(cells=dict(sorted(result.items())), failed_cells=failures)


def snapshot(results_dir: Path) -> Snapshot:
    """Load and aggregate one results directory (raises SpecbenchError on bad input)."""
    cells, failed = load_cells([Path(results_dir)])
    return snapshot_cells(cells, failed)
