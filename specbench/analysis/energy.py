"""The numbers behind the energy table: GPU board energy per output token of a comparison
at every concurrency, tokens per joule, mean power, and where speculation's energy per
token crosses the baseline's.

Board energy only (`metrics/declarations.py`, docs/energy.md). A cell whose energy could
not be given (a reason code) is left out of its point's mean and named with its reason,
never counted as 0.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specbench.analysis import table_data as D
from specbench.analysis.intervals import Calibration
from specbench.results.columns import (
    CONCURRENCY,
    ENERGY_DETAIL,
    ENERGY_REASON,
    ENERGY_SOURCE,
    JOULES_PER_OUTPUT_TOKEN,
    LABEL,
    LAUNCH,
    MEAN_POWER_W_PER_GPU,
    OUTPUT_TOKENS_PER_JOULE,
    REPEAT,
    VIEW,
)
from specbench.results.selection import Comparison, mixed_cells

if TYPE_CHECKING:
    import pandas as pd

#: Columns of `energy_data` besides the sides' J/token (`speculative`, `baseline`), their
#: ratio and the launch-level interval columns (`table_data.interval_columns`).
SPECULATIVE_TOKENS_PER_JOULE = D.SPECULATIVE_TOKENS_PER_JOULE
BASELINE_TOKENS_PER_JOULE = D.BASELINE_TOKENS_PER_JOULE
SPECULATIVE_POWER = "speculative_mean_power_w_per_gpu"
BASELINE_POWER = "baseline_mean_power_w_per_gpu"
SPECULATIVE_MEASURED = "speculative_cells_measured"
BASELINE_MEASURED = "baseline_cells_measured"
SPECULATIVE_CELLS = "speculative_cells"
BASELINE_CELLS = "baseline_cells"


@dataclass(frozen=True, slots=True)
class Missing:
    """One cell without an energy figure, and why (its reason code and words)."""

    label: str
    concurrency: int
    launch: int
    repeat: int
    reason: str
    detail: str | None


@dataclass(frozen=True, slots=True)
class Crossover:
    """Speculation's J/token moves to the other side of the baseline's between two measured
    concurrencies: `lower_before` says which side it was on at `below`."""

    below: int
    above: int
    lower_before: bool


def pair_cells(frame: pd.DataFrame, comparison: Comparison, view: str) -> pd.DataFrame:
    """The mixed cells of both configs of `comparison` on `view`."""
    cells = mixed_cells(frame)
    pair = [comparison.speculative, comparison.baseline]
    return cells[cells[LABEL].isin(pair) & (cells[VIEW] == view)]


def measured_sources(cells: pd.DataFrame) -> list[str]:
    """The sources that measured some of `cells` (telemetry not off), sorted."""
    if ENERGY_SOURCE not in cells:
        return []
    return sorted({str(s) for s in cells[ENERGY_SOURCE].dropna() if s != "off"})


def missing_cells(cells: pd.DataFrame) -> list[Missing]:
    """The cells with telemetry on whose energy per token is null, with their reasons."""
    found = []
    for row in cells.to_dict(orient="records"):
        value, reason = row.get(JOULES_PER_OUTPUT_TOKEN), row.get(ENERGY_REASON)
        if _finite(value) or reason in (None, "off") or row.get(ENERGY_SOURCE) == "off":
            continue
        found.append(
            Missing(
                str(row[LABEL]),
                int(row[CONCURRENCY]),
                int(row.get(LAUNCH) or 0),
                int(row[REPEAT]),
                str(reason),
                row.get(ENERGY_DETAIL),
            )
        )
    return sorted(found, key=lambda m: (m.label, m.concurrency, m.launch, m.repeat))


def energy_data(
    frame: pd.DataFrame,
    comparison: Comparison,
    view: str,
    calibration: Calibration | None = None,
) -> pd.DataFrame:
    """Per concurrency either config ran: each side's mean J/token over the cells that have
    one, their ratio (speculative / baseline), tokens per joule, mean power per GPU, cells
    measured out of cells run, and the J/token's launch-level intervals."""
    import pandas as pd

    metrics = [JOULES_PER_OUTPUT_TOKEN, OUTPUT_TOKENS_PER_JOULE, MEAN_POWER_W_PER_GPU]
    sides = {}
    for side, label in ((D.SPECULATIVE, comparison.speculative), (D.BASELINE, comparison.baseline)):
        means = D.label_means(frame, label, view, metrics)
        intervals = D.label_intervals(frame, label, view, JOULES_PER_OUTPUT_TOKEN, calibration)
        sides[side] = (means, intervals)
    cells = pair_cells(frame, comparison, view)
    concurrencies = sorted({int(c) for c in cells[CONCURRENCY]})
    rows = []
    for c in concurrencies:
        row: dict[str, object] = {CONCURRENCY: c}
        for side, label, per_joule, power, measured, total in (
            (D.SPECULATIVE, comparison.speculative, SPECULATIVE_TOKENS_PER_JOULE,
             SPECULATIVE_POWER, SPECULATIVE_MEASURED, SPECULATIVE_CELLS),
            (D.BASELINE, comparison.baseline, BASELINE_TOKENS_PER_JOULE,
             BASELINE_POWER, BASELINE_MEASURED, BASELINE_CELLS),
        ):  # fmt: skip
            means = sides[side][0]
            at = means.loc[c].to_dict() if c in means.index else {}
            row[side] = _value(at, JOULES_PER_OUTPUT_TOKEN)
            row[per_joule] = _value(at, OUTPUT_TOKENS_PER_JOULE)
            row[power] = _value(at, MEAN_POWER_W_PER_GPU)
            own = cells[(cells[LABEL] == label) & (cells[CONCURRENCY] == c)]
            row[total] = len(own)
            row[measured] = int(own[JOULES_PER_OUTPUT_TOKEN].notna().sum())
        spec, base = row[D.SPECULATIVE], row[D.BASELINE]
        assert isinstance(spec, float) and isinstance(base, float)
        row[D.RATIO] = spec / base if _finite(spec) and _finite(base) and base else math.nan
        row.update(D.interval_columns(sides[D.SPECULATIVE][1].get(c), sides[D.BASELINE][1].get(c)))
        rows.append(row)
    return pd.DataFrame(rows)


def crossover(data: pd.DataFrame) -> Crossover | None:
    """The first pair of neighbouring concurrencies (both sides measured at each) between
    which speculation's J/token moves from below the baseline's to above it, or back."""
    points = [
        (int(c), float(s) < float(b))
        for c, s, b in zip(data[CONCURRENCY], data[D.SPECULATIVE], data[D.BASELINE], strict=True)
        if _finite(s) and _finite(b) and float(s) != float(b)
    ]
    for (below, lower), (above, lower_next) in itertools.pairwise(points):
        if lower != lower_next:
            return Crossover(below, above, lower)
    return None


def _value(at: Mapping[Any, object], column: str) -> float:
    value = at.get(column)
    return float(value) if isinstance(value, (int, float)) and _finite(value) else math.nan


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
