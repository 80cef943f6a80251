"""The Pareto frontier of output throughput against interactivity, per workload.

Each point is one server config at one concurrency on one workload (a row of
`analysis.intervals.summary_mean`, mixed cells only): its output tok/s/GPU (per server when
a config of the workload does not know its GPUs, `table_data.throughput_column`) against its
interactivity, tok/s/user = 1000 / median TPOT (ms). A config's points in concurrency order
make its line. A point is on the frontier when no other point of the same workload is at
least as good on both axes and strictly better on one. Two points equal on both axes do not
beat each other: both stay on the frontier, and the table says they tie.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from specbench.analysis import wording as W
from specbench.analysis.intervals import SUFFIX_CI_HIGH, SUFFIX_CI_KIND, SUFFIX_CI_LOW
from specbench.analysis.table import Table
from specbench.analysis.table_data import THROUGHPUT_METRIC, throughput_column
from specbench.analysis.tables import PER_SERVER_NOTE, TableUnavailable, view_suffix
from specbench.metrics.declarations import INTERACTIVITY, figure_of
from specbench.results.columns import (
    CATEGORY,
    CONCURRENCY,
    IS_BASELINE,
    LABEL,
    OUTPUT_TOK_S,
    SPLIT,
    VIEW,
)
from specbench.stats.launches import KIND_WORDS

if TYPE_CHECKING:
    import pandas as pd

#: Columns of `pareto_points`: whether the point is on its workload's frontier, and the
#: other points it ties with (equal on both axes), as `config c=N` joined by `; `.
ON_FRONTIER = "on_frontier"
TIED_WITH = "tied_with"
#: The other axis: interactivity, as declared.
INTERACTIVITY_COLUMN = INTERACTIVITY.name


def _number(value: object) -> float:
    """A frame value as a float, NaN where absent."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return number


def _beats(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether point `a` dominates `b`: no worse on both axes, better on one."""
    return a[0] >= b[0] and a[1] >= b[1] and a != b


def frontier_flags(values: Sequence[tuple[float, float]]) -> list[bool]:
    """For each (x, y) point, higher better on both: whether no other point beats it."""
    return [not any(_beats(other, point) for other in values) for point in values]


def pareto_points(points: pd.DataFrame) -> pd.DataFrame:
    """Every point of every workload with both axes, flagged on or off its frontier.

    `points`: `summary_mean`'s frame (one row per config × workload × concurrency). Columns:
    label, is_baseline, view, concurrency, throughput_metric (the throughput figure compared on that
    workload), that figure's column and its `_ci_low`, `_ci_high`, `_ci_kind` where the
    frame has them, the same for interactivity, on_frontier and tied_with. Rows of one
    workload sorted by config and concurrency; points missing an axis are left out.
    """
    import pandas as pd

    mixed = points[points[CATEGORY].isna()] if CATEGORY in points.columns else points
    rows: list[dict[str, Any]] = []
    for view, group in mixed.groupby(VIEW, sort=True):
        throughput = throughput_column(group, sorted({str(v) for v in group[LABEL]}))
        group = group.sort_values([LABEL, CONCURRENCY])
        found: list[dict[str, Any]] = []
        for record in group.to_dict(orient="records"):
            x = _number(record.get(INTERACTIVITY_COLUMN))
            y = _number(record.get(throughput))
            if not (math.isfinite(x) and math.isfinite(y)):
                continue
            row: dict[str, Any] = {
                LABEL: str(record[LABEL]),
                IS_BASELINE: bool(record.get(IS_BASELINE, False)),
                VIEW: str(view),
                CONCURRENCY: int(record[CONCURRENCY]),
                THROUGHPUT_METRIC: throughput,
            }
            for figure in (throughput, INTERACTIVITY_COLUMN):
                row[figure] = _number(record.get(figure))
                row[figure + SUFFIX_CI_LOW] = _number(record.get(figure + SUFFIX_CI_LOW))
                row[figure + SUFFIX_CI_HIGH] = _number(record.get(figure + SUFFIX_CI_HIGH))
                kind = record.get(figure + SUFFIX_CI_KIND)
                row[figure + SUFFIX_CI_KIND] = kind if isinstance(kind, str) else None
            found.append(row)
        pairs = [(r[INTERACTIVITY_COLUMN], r[throughput]) for r in found]
        for row, pair, on in zip(found, pairs, frontier_flags(pairs), strict=True):
            row[ON_FRONTIER] = on
            row[TIED_WITH] = "; ".join(
                f"{other[LABEL]} c={other[CONCURRENCY]}"
                for other, other_pair in zip(found, pairs, strict=True)
                if other is not row and other_pair == pair
            )
        rows += found
    return pd.DataFrame(rows)


def _with_interval(row: Mapping[Any, Any], figure: str) -> str:
    """`412.3 (400.1–425.0)`: the value, and its 95% interval where the frame has one."""
    value = f"{row[figure]:,.1f}"
    low, high = row.get(figure + SUFFIX_CI_LOW), row.get(figure + SUFFIX_CI_HIGH)
    if isinstance(low, float) and isinstance(high, float) and math.isfinite(low + high):
        value += f" ({low:,.1f}–{high:,.1f})"
    return value


def throughput_unit(throughput: str) -> str:
    """The declared unit of the throughput compared (`tok/s/GPU`, or per server `tok/s`)."""
    declared = figure_of(throughput)
    return declared.unit if declared is not None else throughput


def pareto_frontier(points: pd.DataFrame, view: str, split: str | None = None) -> Table:
    """The frontier points of one workload (`pareto_points`), highest throughput first.

    `points`: `summary_mean`'s frame; `split`: the SPEED-Bench split of `view`, for its
    name. Raises `TableUnavailable` when fewer than two configs ran the workload.
    """
    every = pareto_points(points)
    if not len(every) or view not in set(every[VIEW]):
        raise TableUnavailable(f"Pareto frontier: no point of {view} has both axes")
    in_view = every[every[VIEW] == view]
    configs = sorted(set(in_view[LABEL]))
    if len(configs) < 2:
        raise TableUnavailable(f"Pareto frontier of {view}: one config ({configs[0]}), no choice")
    throughput = str(in_view[THROUGHPUT_METRIC].iloc[0])
    frontier = in_view[in_view[ON_FRONTIER]].sort_values(
        [throughput, INTERACTIVITY_COLUMN, LABEL, CONCURRENCY], ascending=[False, True, True, True]
    )
    records = frontier.to_dict(orient="records")
    rows = tuple(
        (
            str(r[LABEL]),
            str(r[CONCURRENCY]),
            _with_interval(r, throughput),
            _with_interval(r, INTERACTIVITY_COLUMN),
        )
        for r in records
    )
    unit = throughput_unit(throughput)
    notes = [
        f"Each point: one config at one concurrency (means over repeats and launches); "
        f"interactivity = {INTERACTIVITY.definition}. A point is on the frontier when no "
        "other point of this workload is at least as high on both axes and higher on one: "
        f"{len(records)} of {len(in_view)} points of {len(configs)} configs.",
    ]
    groups: dict[tuple[float, float], list[str]] = {}
    for r in records:
        if r[TIED_WITH]:
            pair = (r[INTERACTIVITY_COLUMN], r[throughput])
            groups.setdefault(pair, []).append(f"{r[LABEL]} c={r[CONCURRENCY]}")
    if groups:
        notes.append(
            "Tied (equal on both axes; neither beats the other, so both are kept): "
            + "; ".join(" = ".join(names) for names in groups.values())
            + "."
        )
    off = [c for c in configs if c not in set(frontier[LABEL])]
    if off:
        notes.append(f"Beaten at every concurrency: {', '.join(off)}.")
    kinds = {
        str(r.get(f + SUFFIX_CI_KIND))
        for r in records
        for f in (throughput, INTERACTIVITY_COLUMN)
        if r.get(f + SUFFIX_CI_KIND) in KIND_WORDS
    }
    if kinds:
        words = "; ".join(KIND_WORDS[k] for k in sorted(kinds))
        notes.append(f"In brackets: the 95% interval ({words}).")
    if throughput == OUTPUT_TOK_S:
        notes.append(PER_SERVER_NOTE)
    return Table(
        name=f"pareto_frontier{view_suffix(view, points, VIEW)}",
        title=f"Throughput against interactivity (Pareto frontier), {W.dataset_name(view, split)}",
        columns=("Config", "Concurrency", unit, INTERACTIVITY.unit),
        rows=rows,
        data=frontier.reset_index(drop=True),
        footnotes=tuple(notes),
    )


def hover_texts(points: pd.DataFrame) -> tuple[str, ...]:
    """One hover text per point of `pareto_points`' frame, in its row order: the cell
    (config, concurrency) and both values with their intervals."""
    texts = []
    for r in points.to_dict(orient="records"):
        throughput = str(r[THROUGHPUT_METRIC])
        lines = [
            f"Config: {r[LABEL]}",
            f"Concurrency: {r[CONCURRENCY]}",
            f"{throughput_unit(throughput)}: {_with_interval(r, throughput)}",
            f"{INTERACTIVITY.unit}: {_with_interval(r, INTERACTIVITY_COLUMN)}",
            "on the frontier" if r[ON_FRONTIER] else "beaten by another point",
        ]
        texts.append("\n".join(lines))
    return tuple(texts)


def split_of(points: pd.DataFrame, view: str) -> str | None:
    """The SPEED-Bench split of a workload, where it has one."""
    if SPLIT not in points.columns:
        return None
    splits = points.loc[points[VIEW] == view, SPLIT].dropna()
    return str(splits.iloc[0]) if len(splits) else None
