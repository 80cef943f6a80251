"""Each point's figures with their launch-level 95% intervals (`stats.launches`).

A point is a row of `summary_mean.csv`: the identity columns but `repeat` and `launch`
(config × workload × concurrency, and category where a workload splits by it). Its figures
are the declared ones with `interval` (`metrics.declarations.with_intervals`). Per launch,
a figure's value is the mean over that launch's repeats; its within-launch standard error
is, in order of preference:

1. the repeats' stored bootstrap errors (summary `standard_errors`; a derived figure's
   propagated from its source's), combined with the spread of the repeats
   (`stats.standard_errors.combined_standard_error`: the larger of √Σse²/n and std/√n);
2. the repeats' precision intervals (summary `precision`: (ci_high − ci_low) / 2 / 1.96);
3. the spread of two or more repeats, std/√n;
4. none: a one-launch point then has no bounds.

The interval's kind, the between-launch standard deviation and the within-launch error go
beside the bounds: `<figure>_ci_low`, `<figure>_ci_high`, `<figure>_ci_kind`,
`<figure>_between_launch_sd`, `<figure>_within_launch_se`, and `launches` (distinct launches
of the point). An interval is centred on the mean of the launch values, the same as the
point's plain mean when every launch ran the same number of repeats.

`Calibration`: the between-launch variance of an earlier campaign of the same suite (≥ 3
launches), as τ/|x| per figure, server config and concurrency (pooled over workloads as a
root mean square), else per figure; it widens a one-launch point (`report --variance-from`).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specbench.analysis.aggregate import group_columns
from specbench.common.errors import SpecbenchError
from specbench.metrics.declarations import figure_of, with_intervals
from specbench.results.columns import CONCURRENCY, LAUNCH, SERVER_LABEL
from specbench.stats.launches import (
    MIN_LAUNCHES,
    Interval,
    between_launch_cv,
    launch_interval,
)
from specbench.stats.significance import Z95
from specbench.stats.standard_errors import combined_standard_error

if TYPE_CHECKING:
    import pandas as pd

#: Column of `summary_mean.csv`: distinct server launches behind the point.
LAUNCHES = "launches"
#: Suffixes of a figure's interval columns.
SUFFIX_CI_LOW = "_ci_low"
SUFFIX_CI_HIGH = "_ci_high"
SUFFIX_CI_KIND = "_ci_kind"
SUFFIX_BETWEEN = "_between_launch_sd"
SUFFIX_WITHIN = "_within_launch_se"
#: The summary's nested records, as the frame keeps them (JSON text).
_ERRORS = "standard_errors"
_PRECISION = "precision"


def interval_columns(figure: str) -> tuple[str, ...]:
    """The columns `point_intervals` adds for `figure`, in order."""
    suffixes = (SUFFIX_CI_LOW, SUFFIX_CI_HIGH, SUFFIX_CI_KIND, SUFFIX_BETWEEN, SUFFIX_WITHIN)
    return tuple(figure + suffix for suffix in suffixes)


@dataclass(frozen=True, slots=True)
class Calibration:
    """τ/|x| of an earlier campaign: by (figure, server config, concurrency), and by figure."""

    source: str
    by_point: dict[tuple[str, str, int], float] = field(default_factory=dict)
    by_figure: dict[str, float] = field(default_factory=dict)

    def cv(self, figure: str, server: str, concurrency: int) -> float | None:
        """The figure's relative between-launch sd at this config and concurrency, else its
        campaign-wide one; None when the campaign never measured it over launches."""
        found = self.by_point.get((figure, server, concurrency))
        return found if found is not None else self.by_figure.get(figure)


def _nested(row: pd.Series, column: str) -> dict[str, Any] | None:
    value = row.get(column)
    if isinstance(value, str) and value:
        loaded = json.loads(value)
        return loaded if isinstance(loaded, dict) else None
    return value if isinstance(value, dict) else None


def repeat_error(row: pd.Series, figure: str) -> float | None:
    """One repeat's within-run standard error of `figure` (its stored bootstrap error, a
    derived figure's propagated from its source's, else its precision interval's)."""
    errors = _nested(row, _ERRORS)
    stored = (errors or {}).get("figures") or {}
    if figure in stored:
        return float(stored[figure])
    declared = figure_of(figure)
    derived = declared.derived if declared is not None else None
    source = row.get(derived.source) if derived is not None else None
    if (
        derived is not None
        and derived.source in stored
        and isinstance(source, (int, float))
        and not math.isnan(source)
    ):
        return derived.standard_error(float(source), float(stored[derived.source]))
    precision = ((_nested(row, _PRECISION) or {}).get("figures") or {}).get(figure)
    if isinstance(precision, dict):
        return (float(precision["ci_high"]) - float(precision["ci_low"])) / 2.0 / Z95
    return None


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not math.isnan(float(value))


def _launch_values(group: pd.DataFrame, figure: str) -> tuple[list[float], list[float | None]]:
    """Each launch's value (mean over its repeats) and within-launch error."""
    values: list[float] = []
    errors: list[float | None] = []
    launches = group[LAUNCH] if LAUNCH in group.columns else None
    parts = group.groupby(launches, sort=True) if launches is not None else [(0, group)]
    for _, launch in parts:
        rows = [r for _, r in launch.iterrows() if _number(r.get(figure))]
        if not rows:
            continue
        repeat_values = [float(r[figure]) for r in rows]
        n = len(repeat_values)
        mean = sum(repeat_values) / n
        std = math.sqrt(sum((v - mean) ** 2 for v in repeat_values) / (n - 1)) if n >= 2 else None
        within = [repeat_error(r, figure) for r in rows]
        known = [e for e in within if e is not None]
        if len(known) == n:
            error = combined_standard_error(known, std)
        else:
            error = std / math.sqrt(n) if std is not None else None
        values.append(mean)
        errors.append(error)
    return values, errors


def figure_interval(
    group: pd.DataFrame, figure: str, calibration: Calibration | None = None
) -> Interval | None:
    """The interval of `figure` over the rows of one point; None where it has no value."""
    if figure not in group.columns:
        return None
    values, errors = _launch_values(group, figure)
    if not values:
        return None
    cv = None
    if calibration is not None and len(values) == 1:
        first = group.iloc[0]
        cv = calibration.cv(figure, str(first[SERVER_LABEL]), int(first[CONCURRENCY]))
    return launch_interval(values, errors, calibration_cv=cv)


def point_intervals(
    frame: pd.DataFrame,
    calibration: Calibration | None = None,
    figures: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per point, in `aggregate_repeats`' order: `launches` and each figure's
    interval columns (`interval_columns`). Figures absent from the frame get no columns."""
    import pandas as pd

    keys = group_columns(frame)
    chosen = [f for f in (figures or with_intervals()) if f in frame.columns]
    rows = []
    for _, group in frame.groupby(keys, dropna=False, sort=True):
        row: dict[str, object] = {
            LAUNCHES: int(group[LAUNCH].nunique()) if LAUNCH in group.columns else 1
        }
        for figure in chosen:
            interval = figure_interval(group, figure, calibration)
            low, high, kind, between, within = interval_columns(figure)
            row[low] = _or_nan(interval.low if interval else None)
            row[high] = _or_nan(interval.high if interval else None)
            row[kind] = interval.kind if interval else None
            row[between] = _or_nan(interval.between_launch_sd if interval else None)
            row[within] = _or_nan(interval.within_launch_se if interval else None)
        rows.append(row)
    return pd.DataFrame(rows)


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def summary_mean(frame: pd.DataFrame, calibration: Calibration | None = None) -> pd.DataFrame:
    """`aggregate_repeats(frame)` with each point's launches and interval columns appended."""
    import pandas as pd

    from specbench.analysis.aggregate import aggregate_repeats

    means = aggregate_repeats(frame).reset_index(drop=True)
    intervals = point_intervals(frame, calibration).reset_index(drop=True)
    return pd.concat([means, intervals], axis=1)


def calibration_from(frame: pd.DataFrame, source: str) -> Calibration:
    """τ/|x| of every figure at every point with ≥ `MIN_LAUNCHES` launches."""
    keys = group_columns(frame)
    squares: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for _, group in frame.groupby(keys, dropna=False, sort=True):
        if LAUNCH not in group.columns or group[LAUNCH].nunique() < MIN_LAUNCHES:
            continue
        first = group.iloc[0]
        for figure in with_intervals():
            if figure not in group.columns:
                continue
            values, errors = _launch_values(group, figure)
            cv = between_launch_cv(values, errors)
            if cv is not None:
                point = (figure, str(first[SERVER_LABEL]), int(first[CONCURRENCY]))
                squares[point].append(cv * cv)
    by_point = {key: math.sqrt(sum(s) / len(s)) for key, s in squares.items()}
    per_figure: dict[str, list[float]] = defaultdict(list)
    for (figure, _, _), found in squares.items():
        per_figure[figure] += found
    by_figure = {name: math.sqrt(sum(s) / len(s)) for name, s in per_figure.items()}
    return Calibration(source, by_point, by_figure)


def _suite_identity(directory: Path) -> tuple[str | None, tuple[str, ...]]:
    """The suite name and target model(s) a results directory's manifest records."""
    from specbench.store.manifest import read_manifest

    manifest = read_manifest(directory)
    if manifest is None:
        return None, ()
    suite = manifest.suite or {}
    servers = suite.get("servers") or {}
    models = {str(s.get("model")) for s in servers.values() if isinstance(s, dict)}
    if not models:
        models = {str(s.model) for s in manifest.servers.values() if s.model}
    return suite.get("name"), tuple(sorted(models))


def load_calibration(directory: Path, results_dirs: Sequence[Path]) -> Calibration:
    """The calibration `--variance-from DIRECTORY` names, checked against the results.

    DIRECTORY must be a results directory of the same suite name and target model as every
    one of `results_dirs`, with ≥ 3 launches at some point; anything else is one line
    naming `--variance-from`.
    """
    from specbench.results.frame import cells_frame
    from specbench.results.loading import load_cells
    from specbench.store.layout import MANIFEST

    option = f"--variance-from {directory}"
    if not directory.is_dir():
        raise SpecbenchError(f"{option}: no such directory")
    if not (directory / MANIFEST).is_file():
        raise SpecbenchError(f"{option}: not a specbench results directory (no {MANIFEST})")
    name, models = _suite_identity(directory)
    for results_dir in results_dirs:
        other_name, other_models = _suite_identity(results_dir)
        if name != other_name:
            raise SpecbenchError(
                f"{option}: suite {name!r}, not the suite of {results_dir} ({other_name!r}); "
                "allowed: an earlier campaign of the same suite"
            )
        if models != other_models:
            raise SpecbenchError(
                f"{option}: target model {', '.join(models) or 'unknown'}, not the one of "
                f"{results_dir} ({', '.join(other_models) or 'unknown'}); allowed: the same "
                "target model"
            )
    try:
        cells, _ = load_cells([directory])
    except SpecbenchError as error:
        raise SpecbenchError(f"{option}: {error}") from None
    frame = cells_frame(cells)
    most = int(frame.groupby(group_columns(frame), dropna=False)[LAUNCH].nunique().max())
    if most < MIN_LAUNCHES:
        raise SpecbenchError(
            f"{option}: {most} launch{'es' if most != 1 else ''} per point; at least "
            f"{MIN_LAUNCHES} are needed to measure the between-launch variance"
        )
    return calibration_from(frame, str(directory))
