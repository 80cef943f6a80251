"""Capacity under a latency SLO: the highest concurrency whose latencies meet every bound.

An SLO is bounds on stored latency statistics, written `tpot_p90=50ms,ttft_p90=2s`
(`--slo`) or as a suite's `[slo]` table (`tpot_p90 = "50ms"`). A key is a declared latency
distribution (unit ms: `ttft_ms` → `ttft`) and one of its stored statistics
(`metrics.declarations.STATISTICS`); a value is a positive number with its unit, `ms` or `s`.

Capacity of one config on one workload, its concurrencies in ascending order: the points up
to the first that breaks a bound meet the SLO (a later point that meets it again does not
count: load only grows). Between the last point that meets every bound (a) and the first
that breaks one (b), each broken statistic is taken as linear in concurrency and the
concurrency where it reaches its bound is solved for; the lowest of these is the capacity,
and its throughput (and the bounds of its interval) are interpolated linearly between a and
b the same way: `interpolated`. A bound reached exactly at a measured point is `measured`;
every point breaking a bound is `none`; every point meeting them all is `≥ max measured`
(the capacity is at least the highest concurrency run). The best config of a workload is
the one with the highest throughput at its capacity.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specbench.analysis.intervals import SUFFIX_CI_HIGH, SUFFIX_CI_LOW
from specbench.analysis.table import Table
from specbench.analysis.table_data import THROUGHPUT_METRIC, throughput_column
from specbench.analysis.tables import PER_SERVER_NOTE, TableUnavailable
from specbench.common.errors import SpecbenchError
from specbench.metrics.declarations import STATISTICS, distributions, figure_of
from specbench.results.columns import CATEGORY, CONCURRENCY, LABEL, OUTPUT_TOK_S, VIEW

if TYPE_CHECKING:
    import pandas as pd

#: Units a bound may carry, and how many milliseconds one of each is.
UNITS_MS = {"ms": 1.0, "s": 1000.0}
#: How capacity was found (the table's Basis column).
MEASURED = "measured"
INTERPOLATED = "interpolated"
NONE = "none"
AT_LEAST = "≥ max measured"
#: Columns of `capacity_data`.
WORKLOAD_VIEW = VIEW
CAPACITY = "capacity_concurrency"
BASIS = "capacity_basis"
LIMITED_BY = "limited_by"
MAX_MEASURED = "max_measured_concurrency"
CONCURRENCIES = "concurrencies"
BEST = "best_under_slo"
_EXAMPLE = "tpot_p90=50ms,ttft_p90=2s"
_NUMBER_UNIT = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*$")


def _distribution_key(name: str) -> str:
    return name.removesuffix("_ms")


def slo_keys() -> tuple[str, ...]:
    """Every key an SLO may bound: each latency distribution (unit ms) × statistic."""
    names = [n for n in distributions() if (f := figure_of(n)) is not None and f.unit == "ms"]
    return tuple(f"{_distribution_key(n)}_{s}" for n in names for s in STATISTICS)


def _column_of(key: str) -> str:
    """`tpot_p90` → `tpot_ms_p90`: the stored statistic's column."""
    for name in distributions():
        for statistic in STATISTICS:
            if key == f"{_distribution_key(name)}_{statistic}":
                return f"{name}_{statistic}"
    raise KeyError(key)


@dataclass(frozen=True, slots=True)
class Bound:
    """One bound: a stored latency statistic at most `limit_ms`."""

    key: str
    limit_ms: float
    #: The value as written (`50ms`, `2s`): how the footnote names it.
    written: str

    @property
    def column(self) -> str:
        """The statistic's column in the results frame (`tpot_ms_p90`)."""
        return _column_of(self.key)

    def describe(self) -> str:
        """`tpot_p90 ≤ 50ms`."""
        return f"{self.key} ≤ {self.written}"


@dataclass(frozen=True, slots=True)
class Slo:
    """Bounds on latency statistics, and where they were read (`--slo`, a manifest)."""

    bounds: tuple[Bound, ...]
    source: str

    def describe(self) -> str:
        """`tpot_p90 ≤ 50ms, ttft_p90 ≤ 2s`."""
        return ", ".join(b.describe() for b in self.bounds)


def parse_bound(key: str, value: object, source: str) -> Bound:
    """One bound from its key and written value; bad input is one `SpecbenchError` line
    naming `source` and the key, listing what is allowed."""
    allowed = slo_keys()
    if key not in allowed:
        raise SpecbenchError(f"{source}: unknown SLO key {key!r}; allowed: {', '.join(allowed)}")
    written = str(value).strip() if isinstance(value, (str, int, float)) else ""
    match = _NUMBER_UNIT.match(written)
    if match is None or isinstance(value, bool):
        raise SpecbenchError(
            f"{source}: {key}={value!r} is not a duration; write a positive number and its "
            f"unit, ms or s (e.g. {key}=50ms)"
        )
    number, unit = float(match.group(1)), match.group(2)
    if not unit:
        raise SpecbenchError(
            f"{source}: {key}={written} has no unit; allowed units: ms, s "
            f"(write {key}={written}ms or {key}={written}s)"
        )
    if unit not in UNITS_MS:
        raise SpecbenchError(f"{source}: {key}={written}: unit {unit!r}; allowed units: ms, s")
    if not (math.isfinite(number) and number > 0):
        raise SpecbenchError(f"{source}: {key}={written}: a bound must be positive")
    return Bound(key, number * UNITS_MS[unit], f"{match.group(1)}{unit}")


def slo_from_table(table: Mapping[str, object], source: str) -> Slo:
    """An SLO from a suite's `[slo]` table (key → `"50ms"`)."""
    if not table:
        raise SpecbenchError(f"{source}: an empty SLO; write bounds such as {_EXAMPLE}")
    return Slo(tuple(parse_bound(str(k), v, source) for k, v in table.items()), source)


def parse_slo(text: str, source: str = "--slo") -> Slo:
    """An SLO from `tpot_p90=50ms,ttft_p90=2s`: comma-separated KEY=VALUE pairs."""
    table: dict[str, str] = {}
    for pair in text.split(","):
        key, sep, value = pair.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise SpecbenchError(
                f"{source}: {pair.strip()!r} is not KEY=VALUE; write e.g. {_EXAMPLE} "
                f"(keys: {', '.join(slo_keys())})"
            )
        if key in table:
            raise SpecbenchError(f"{source}: {key} is bounded twice; give each key once")
        table[key] = value
    return slo_from_table(table, source)


@dataclass(frozen=True, slots=True)
class Capacity:
    """One config's capacity on one workload."""

    concurrency: float
    basis: str
    throughput: float
    throughput_low: float
    throughput_high: float
    #: The bound reached at the capacity (the first a higher load would break).
    limited_by: str | None


def _linear(c: float, c_a: float, c_b: float, v_a: float, v_b: float) -> float:
    return v_a + (v_b - v_a) * (c - c_a) / (c_b - c_a)


def _meets(point: Mapping[Any, Any], bounds: Sequence[Bound]) -> bool:
    return all(float(point[b.column]) <= b.limit_ms for b in bounds)


def capacity(
    series: Sequence[Mapping[Any, Any]], bounds: Sequence[Bound], throughput: str
) -> Capacity:
    """Capacity of one config on one workload from its points (each with `concurrency`,
    every bound's column, `throughput` and its `_ci_low`/`_ci_high`), in any order."""
    ordered = sorted(series, key=lambda p: float(p[CONCURRENCY]))

    def at(point: Mapping[Any, Any], basis: str, limited_by: str | None) -> Capacity:
        return Capacity(
            float(point[CONCURRENCY]),
            basis,
            float(point[throughput]),
            _float(point.get(throughput + SUFFIX_CI_LOW)),
            _float(point.get(throughput + SUFFIX_CI_HIGH)),
            limited_by,
        )

    nan = math.nan
    broken = next((i for i, p in enumerate(ordered) if not _meets(p, bounds)), None)
    if broken is None:
        return at(ordered[-1], AT_LEAST, None)
    if broken == 0:
        return Capacity(nan, NONE, nan, nan, nan, None)
    a, b = ordered[broken - 1], ordered[broken]
    c_a, c_b = float(a[CONCURRENCY]), float(b[CONCURRENCY])
    reached = []
    for bound in bounds:
        v_a, v_b = float(a[bound.column]), float(b[bound.column])
        if v_b > bound.limit_ms:  # broken at b, met at a: v_a ≤ limit < v_b
            reached.append((c_a + (bound.limit_ms - v_a) / (v_b - v_a) * (c_b - c_a), bound))
    c, first = min(reached, key=lambda item: item[0])
    if c == c_a:
        return at(a, MEASURED, first.key)

    def between(column: str) -> float:
        return _linear(c, c_a, c_b, _float(a.get(column)), _float(b.get(column)))

    return Capacity(
        c,
        INTERPOLATED,
        between(throughput),
        between(throughput + SUFFIX_CI_LOW),
        between(throughput + SUFFIX_CI_HIGH),
        first.key,
    )


def _float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def capacity_data(points: pd.DataFrame, slo: Slo) -> pd.DataFrame:
    """Capacity of every config on every workload (`summary_mean`'s frame, mixed cells).

    Points missing a bounded statistic or the throughput are left out. Columns: label,
    view, throughput_metric, capacity_concurrency, capacity_basis, the throughput figure's
    column with `_ci_low`/`_ci_high` (at the capacity), limited_by, max_measured_concurrency,
    concurrencies (those used, ascending), best_under_slo (the highest throughput of its
    workload at capacity).
    """
    import pandas as pd

    mixed = points[points[CATEGORY].isna()] if CATEGORY in points.columns else points
    rows: list[dict[str, Any]] = []
    needed = [b.column for b in slo.bounds]
    for view, group in mixed.groupby(VIEW, sort=True):
        throughput = throughput_column(group, sorted({str(v) for v in group[LABEL]}))
        found = []
        for label, series in group.groupby(LABEL, sort=True):
            usable = series.dropna(subset=[c for c in [*needed, throughput] if c in series])
            if any(c not in series.columns for c in needed) or not len(usable):
                continue
            records = usable.to_dict(orient="records")
            result = capacity(records, slo.bounds, throughput)
            found.append(
                {
                    LABEL: str(label),
                    VIEW: str(view),
                    THROUGHPUT_METRIC: throughput,
                    CAPACITY: result.concurrency,
                    BASIS: result.basis,
                    throughput: result.throughput,
                    throughput + SUFFIX_CI_LOW: result.throughput_low,
                    throughput + SUFFIX_CI_HIGH: result.throughput_high,
                    LIMITED_BY: result.limited_by,
                    MAX_MEASURED: int(usable[CONCURRENCY].max()),
                    CONCURRENCIES: sorted(int(c) for c in usable[CONCURRENCY]),
                }
            )
        values = [v for r in found if math.isfinite(v := _float(r[throughput]))]
        for row in found:
            row[BEST] = bool(values) and _float(row[throughput]) == max(values)
        rows += found
    return pd.DataFrame(rows)


def _capacity_text(row: Mapping[Any, Any]) -> str:
    basis = str(row[BASIS])
    if basis == NONE:
        return f"none (c={min(row[CONCURRENCIES])} breaks it)"
    if basis == AT_LEAST:
        return f"≥ {int(row[MAX_MEASURED])} (max measured)"
    c = float(row[CAPACITY])
    return f"{c:.0f} (measured)" if basis == MEASURED else f"{c:.1f} (interpolated)"


def _throughput_text(row: Mapping[Any, Any], throughput: str) -> str:
    value = float(row[throughput])
    if not math.isfinite(value):
        return "—"
    low, high = (
        _float(row.get(throughput + SUFFIX_CI_LOW)),
        _float(row.get(throughput + SUFFIX_CI_HIGH)),
    )
    extra = f" ({low:,.1f}–{high:,.1f})" if math.isfinite(low + high) else ""
    return f"{value:,.1f}{extra}"


def capacity_table(points: pd.DataFrame, slo: Slo, name_of: Mapping[str, str]) -> Table:
    """Capacity under the SLO of every config on every workload, the best of each in bold.

    `name_of`: a workload's (view's) name as the report prints it, in the report's order.
    """
    data = capacity_data(points, slo)
    if not len(data):
        columns = ", ".join(dict.fromkeys(b.column for b in slo.bounds))
        raise TableUnavailable(f"capacity under the SLO: no point has {columns}")
    order = {view: index for index, view in enumerate(name_of)}
    data = data.sort_values(
        [VIEW, LABEL],
        key=lambda s: s.map(lambda v: order.get(v, len(order))) if s.name == VIEW else s,
    ).reset_index(drop=True)
    throughput = str(data[THROUGHPUT_METRIC].iloc[0])
    declared = figure_of(throughput)
    unit = declared.unit if declared is not None else throughput
    several = data[VIEW].nunique() > 1
    rows: list[tuple[str, ...]] = []
    bold: set[int] = set()
    records = data.to_dict(orient="records")
    for index, r in enumerate(records):
        metric = str(r[THROUGHPUT_METRIC])
        rows.append(
            ((name_of.get(str(r[VIEW]), str(r[VIEW])),) if several else ())
            + (
                str(r[LABEL]),
                _capacity_text(r),
                _throughput_text(r, metric),
                r[LIMITED_BY] if isinstance(r[LIMITED_BY], str) else "—",
            )
        )
        if r[BEST]:
            bold.add(index)
    best = [
        f"{r[LABEL]} on {name_of.get(str(r[VIEW]), str(r[VIEW]))}" if several else str(r[LABEL])
        for r in records
        if r[BEST]
    ]
    notes = [
        f"SLO ({slo.source}): {slo.describe()}. Capacity: the highest concurrency at which "
        "every bound holds; between the last concurrency that meets them and the first that "
        "breaks one, each broken statistic is interpolated linearly in concurrency to where it "
        "reaches its bound, and the throughput (and its interval) the same way.",
        f"Best under the SLO (highest throughput at capacity, in bold): {', '.join(best)}."
        if best
        else "No config meets the SLO at its lowest concurrency.",
    ]
    if any(str(r[THROUGHPUT_METRIC]) == OUTPUT_TOK_S for r in records):
        notes.append(PER_SERVER_NOTE)
    return Table(
        name="capacity_under_slo",
        title="Capacity under the SLO",
        columns=(
            *(("Workload",) if several else ()),
            "Config",
            "Capacity (concurrency)",
            f"Output {unit} at capacity",
            "Limited by",
        ),
        rows=tuple(rows),
        data=data,
        bold_rows=frozenset(bold),
        align=(*(("left",) if several else ()), "left", "right", "right", "left"),
        footnotes=tuple(notes),
    )


def recorded_slo(directories: Sequence[Path]) -> Slo | None:
    """The `[slo]` table of the suite the results directories recorded (their manifests);
    None when none has one. Directories whose suites bound differently are refused, one line
    saying to pass `--slo`."""
    from specbench.store.layout import MANIFEST
    from specbench.store.manifest import read_manifest

    found: dict[Path, Mapping[str, object]] = {}
    for directory in directories:
        manifest = read_manifest(directory)
        table = (manifest.suite or {}).get("slo") if manifest is not None else None
        if table:
            found[directory] = table
    if not found:
        return None
    tables = list(found.items())
    for directory, table in tables[1:]:
        if table != tables[0][1]:
            raise SpecbenchError(
                f"{tables[0][0] / MANIFEST} and {directory / MANIFEST}: their suites' [slo] "
                "tables differ; pass --slo to choose the bounds"
            )
    directory, table = tables[0]
    return slo_from_table(table, f"{directory / MANIFEST}: suite.slo")
