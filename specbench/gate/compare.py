"""Cell-by-cell comparison of current results with a baseline: one verdict per cell × metric.

A metric is a regression only when it got worse by more than its tolerance AND the
worsening is significant (`gate.significance`): a one-sided t test of the change against
the standard error of the difference, √(se_b² + se_c²), from each side's stored errors
(within-run cluster bootstrap, combined with the spread over repeats), at level α / m with
m the figures × cells tested (Bonferroni). Each row records which rule decided it, the
interval of the change at its level, and the smallest worsening the test catches with the
configured power (`detectable`).

Figures whose errors are not stored on both sides (an older baseline or older results)
fall back to the older rule and say so in the row: the noise band `noise_sigmas` ×
√(s_b²/n_b + s_c²/n_c) from the std over repeats (one side's std standing in for both when
only it has repeats), or the tolerance alone when neither side has repeats. A cell with
fewer than 5 conversations has no noise estimate (the row says so) and takes the same
fallback. `max` rules (failed requests) ignore the baseline and the noise.

Verdicts: `pass`, `improved` (better beyond tolerance and noise), `within_noise` (worse than
the tolerance but not significantly: passes), `regression`, `new` (not in the baseline:
reported, never a failure) and `missing`: a baseline cell absent from the results (failed
or never run) is bad input (exit 2); a metric gone from a present cell fails like a
regression (exit 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from specbench.common.errors import SpecbenchError
from specbench.gate.baseline import Baseline, SuiteIdentity
from specbench.gate.rules import CATEGORY_FAMILY, PER_POSITION_FAMILY, GateRules, MetricRule
from specbench.gate.significance import (
    bonferroni_level,
    critical_value,
    detectable_worsening,
    difference_error,
    welch_df,
    worsening_p_value,
)
from specbench.gate.snapshot import CellStats, MetricStats, Snapshot
from specbench.gate.suites import check_suites, server_notes
from specbench.results.columns import ACCEPTANCE_LENGTH, PER_POSITION_PREFIX

Verdict = Literal["pass", "improved", "within_noise", "regression", "new", "missing"]
#: What decided a row: the significance test, the older repeat noise band, the tolerance
#: alone, or a ceiling (`max` rules).
DecidedBy = Literal["significance", "noise band", "tolerance", "ceiling", ""]
PASSING: frozenset[str] = frozenset({"pass", "improved", "within_noise", "new"})
#: Shown instead of a metric name on the single row of a new cell.
ALL_METRICS = "(all)"
#: Row of a cell some of whose repeats failed (failure.json beside other repeats' summaries).
FAILED_REPEATS = "(repeats)"


@dataclass(frozen=True, slots=True)
class Comparison:
    """The verdict on one metric of one cell."""

    cell: str
    metric: str
    verdict: Verdict
    direction: str
    tolerance: str
    baseline: MetricStats | None = None
    current: MetricStats | None = None
    allowed: float | None = None
    noise: float | None = None
    note: str = ""
    cell_missing: bool = False
    decided_by: DecidedBy = ""
    #: √(se_b² + se_c²): standard error of the change (significance rows only).
    difference_se: float | None = None
    #: One-sided p of "no worsening", the level it was tested at (α / m), and the
    #: Welch degrees of freedom of the t test (None: normal).
    p_value: float | None = None
    level: float | None = None
    df: float | None = None
    #: Smallest true worsening (metric units) caught with the rules' power.
    detectable: float | None = None

    @property
    def interval(self) -> tuple[float, float] | None:
        """current − baseline ± t_{1−level, ν} × SE: the change's interval at the row's level.

        A worsening is significant exactly when this interval lies wholly on the worse side.
        """
        change = self.change
        if change is None or self.difference_se is None or self.level is None:
            return None
        half = critical_value(self.level, self.df) * self.difference_se
        return change - half, change + half

    @property
    def change(self) -> float | None:
        """current − baseline, in the metric's units."""
        if self.baseline is None or self.current is None:
            return None
        return self.current.value - self.baseline.value

    @property
    def relative_change(self) -> float | None:
        """(current − baseline) / |baseline|; None when the baseline is 0 or absent."""
        change = self.change
        if change is None or self.baseline is None or self.baseline.value == 0:
            return None
        return change / abs(self.baseline.value)


@dataclass(frozen=True)
class GateReport:
    """Every comparison, plus notes that explain the setting (suite, servers, noise)."""

    comparisons: list[Comparison]
    notes: list[str] = field(default_factory=list)
    suite_name: str | None = None

    def with_verdict(self, *verdicts: str) -> list[Comparison]:
        return [c for c in self.comparisons if c.verdict in verdicts]

    @property
    def missing_cells(self) -> list[str]:
        """Baseline cells absent from the results (failed or never run): bad input."""
        return sorted({c.cell for c in self.with_verdict("missing") if c.cell_missing})

    @property
    def exit_code(self) -> int:
        """2 when a baseline cell is missing, else 1 on a regression or a metric gone, else 0.

        A metric gone from a cell that is present (AL after speculation was switched off,
        or a category whose requests all failed) is the run's fault, not the input's.
        """
        if self.missing_cells:
            return 2
        return 1 if self.with_verdict("regression", "missing") else 0


def noise_band(
    baseline: MetricStats, current: MetricStats, sigmas: float
) -> tuple[float | None, str]:
    """`sigmas` × the standard error of the difference of the means, and how it was found."""
    b_std = baseline.std if baseline.n >= 2 else None
    c_std = current.std if current.n >= 2 else None
    if b_std is not None and c_std is not None:
        return sigmas * math.sqrt(b_std**2 / baseline.n + c_std**2 / current.n), ""
    if b_std is not None or c_std is not None:
        std = b_std if b_std is not None else c_std
        assert std is not None
        side = "baseline" if b_std is not None else "current"
        return (
            sigmas * std * math.sqrt(1 / baseline.n + 1 / current.n),
            f"noise from the {side} spread only",
        )
    return None, "n=1: tolerance only (no spread to estimate noise)"


def allowed_worsening(rule: MetricRule, baseline: MetricStats, cell: str, metric: str) -> float:
    if rule.relative is not None:
        return rule.relative * abs(baseline.value)
    if rule.absolute is not None:
        return rule.absolute
    assert rule.spread is not None
    if baseline.std is None:
        raise SpecbenchError(
            f"rule {metric}: tolerance 'spread' needs a baseline with >= 2 repeats, but cell "
            f"{cell} has {baseline.n}; use relative or absolute, or save a baseline with repeats"
        )
    return rule.spread * baseline.std


def _fallback_reason(baseline: MetricStats, current: MetricStats, level: float | None) -> str:
    """Why a row is not judged by the significance test."""
    for side, stats in (("baseline", baseline), ("results", current)):
        if stats.se is None and stats.se_note:
            return f"{side}: {stats.se_note}"
    if baseline.se is None:
        return "baseline without stored errors (older file): older rule"
    if current.se is None:
        return "results without stored errors (older results): older rule"
    return "significance test off"


def judge(
    rule: MetricRule,
    baseline: MetricStats | None,
    current: MetricStats,
    *,
    cell: str,
    metric: str,
    sigmas: float,
    level: float | None = None,
    power: float = 0.8,
) -> Comparison:
    """The verdict on one metric present in the results.

    `level`: the per-figure significance level (α / m); None: the significance test is off
    and the older noise band decides.
    """
    common: dict[str, Any] = {
        "cell": cell,
        "metric": metric,
        "direction": rule.direction,
        "tolerance": rule.describe(),
        "baseline": baseline,
        "current": current,
    }
    if rule.max is not None:
        worst = current.max
        verdict: Verdict = "regression" if worst > rule.max else "pass"
        note = f"worst repeat {worst:g}" if current.n > 1 else ""
        return Comparison(
            **common, verdict=verdict, allowed=rule.max, note=note, decided_by="ceiling"
        )
    assert baseline is not None
    sign = 1.0 if rule.direction == "higher" else -1.0
    worsening = sign * (baseline.value - current.value)
    allowed = allowed_worsening(rule, baseline, cell, metric)
    if rule.noise and tested(rule, baseline, current) and level is not None:
        (se_b, df_b), (se_c, df_c) = side_errors(baseline, current)
        error = difference_error(se_b, se_c)
        df = welch_df(se_b, df_b, se_c, df_c)
        p_value = worsening_p_value(worsening, error, df)
        if worsening > allowed:
            verdict = "regression" if p_value <= level else "within_noise"
        elif -worsening > allowed and 1 - p_value <= level:
            verdict = "improved"
        else:
            verdict = "pass"
        return Comparison(
            **common,
            verdict=verdict,
            allowed=allowed,
            decided_by="significance",
            difference_se=error,
            p_value=p_value,
            level=level,
            df=df,
            detectable=detectable_worsening(allowed, error, level, power, df),
        )
    if not rule.noise or sigmas == 0:
        noise, note = None, "noise check off"
    else:
        noise, note = noise_band(baseline, current, sigmas)
        note = "; ".join(filter(None, [_fallback_reason(baseline, current, level), note]))
    beyond_noise = noise is None or abs(worsening) > noise
    if worsening > allowed:
        verdict = "regression" if beyond_noise else "within_noise"
    elif -worsening > allowed and beyond_noise:
        verdict = "improved"
    else:
        verdict = "pass"
    return Comparison(
        **common,
        verdict=verdict,
        allowed=allowed,
        noise=noise,
        note=note,
        decided_by="noise band" if noise is not None else "tolerance",
    )


def side_errors(
    baseline: MetricStats, current: MetricStats
) -> tuple[tuple[float, float | None], tuple[float, float | None]]:
    """(se, degrees of freedom) of each side; a side borrows the other's per-run spread.

    The std over repeats is the run-to-run noise of one run (what a within-run bootstrap
    cannot see: another machine, batch nondeterminism); a single-repeat current run has
    at least that noise, so its error is max(se, std / √n) with the other side's std
    (and that std's degrees of freedom, repeats − 1, when it decides).
    """
    spread = next((s for s in (baseline, current) if s.n >= 2 and s.std is not None), None)
    sides = []
    for stats in (baseline, current):
        assert stats.se is not None
        se, df = stats.se, stats.df
        if spread is not None and spread.std is not None:
            borrowed = spread.std / math.sqrt(stats.n)
            if borrowed > se:
                se, df = borrowed, float(spread.n - 1)
        sides.append((se, df))
    return sides[0], sides[1]


def tested(rule: MetricRule, baseline: MetricStats | None, current: MetricStats | None) -> bool:
    """Whether the significance test judges this row (errors stored on both sides)."""
    return (
        rule.max is None
        and rule.noise
        and baseline is not None
        and current is not None
        and baseline.se is not None
        and current.se is not None
    )


def metrics_of(
    rules: dict[str, MetricRule], baseline: CellStats | None, current: CellStats | None
) -> Iterator[tuple[str, MetricRule, MetricStats | None, MetricStats | None]]:
    """(row name, rule, baseline stats, current stats) of every metric a rule covers."""
    cells = [c for c in (baseline, current) if c is not None]
    for name, rule in rules.items():
        if name == PER_POSITION_FAMILY:
            positions = sorted(
                {m for c in cells for m in c.metrics if m.startswith(PER_POSITION_PREFIX)},
                key=lambda m: int(m[len(PER_POSITION_PREFIX) :]),
            )
            for metric in positions:
                if metric not in rules:
                    yield metric, rule, _get(baseline, metric), _get(current, metric)
        elif name == CATEGORY_FAMILY:
            for category in sorted({k for c in cells for k in c.categories}):
                yield (
                    f"{ACCEPTANCE_LENGTH}[{category}]",
                    rule,
                    _get_category(baseline, category),
                    _get_category(current, category),
                )
        else:
            yield name, rule, _get(baseline, name), _get(current, name)


def _get(cell: CellStats | None, metric: str) -> MetricStats | None:
    return cell.metrics.get(metric) if cell is not None else None


def _get_category(cell: CellStats | None, category: str) -> MetricStats | None:
    if cell is None:
        return None
    return cell.categories.get(category, {}).get(ACCEPTANCE_LENGTH)


def _check_cell(key: str, baseline: CellStats, current: CellStats) -> None:
    for name in ("max_tokens", "temperature", "dataset_dir", "category"):
        was, now = getattr(baseline, name), getattr(current, name)
        if was != now:
            raise SpecbenchError(
                f"cell {key}: {name} is {now!r} in the results but {was!r} in the baseline; "
                "the measurements are not comparable"
            )


def compare_cell(
    key: str,
    baseline: CellStats | None,
    current: CellStats | None,
    rules: GateRules,
    failure: str | None = None,
    level: float | None = None,
) -> list[Comparison]:
    """Every row of one cell (present in the baseline, the results, or both).

    `level`: the per-figure significance level (α / m over the whole gate run).
    """
    effective = rules.effective()
    if baseline is None:
        assert current is not None
        return [
            Comparison(
                cell=key,
                metric=ALL_METRICS,
                verdict="new",
                direction="",
                tolerance="",
                note="not in the baseline: not gated",
            )
        ]
    rows: list[Comparison] = []
    if current is not None:
        _check_cell(key, baseline, current)
        if failure:
            rows.append(
                Comparison(
                    cell=key,
                    metric=FAILED_REPEATS,
                    verdict="missing",
                    direction="",
                    tolerance="",
                    note=f"a repeat failed ({failure}); the others are compared",
                )
            )
    for metric, rule, was, now in metrics_of(effective, baseline, current):
        if now is None and was is None:
            continue  # not measured on either side, e.g. AL of a server without speculation
        if now is None:
            if current is None:
                note = f"cell failed: {failure}" if failure else "cell not in the results"
            else:
                note = "metric not in the results"
            rows.append(
                Comparison(
                    cell=key,
                    metric=metric,
                    verdict="missing",
                    direction=rule.direction,
                    tolerance=rule.describe(),
                    baseline=was,
                    note=note,
                    cell_missing=current is None,
                )
            )
        elif was is None and rule.max is None:
            rows.append(
                Comparison(
                    cell=key,
                    metric=metric,
                    verdict="new",
                    direction=rule.direction,
                    tolerance=rule.describe(),
                    current=now,
                    note="not in the baseline: not gated",
                )
            )
        else:
            rows.append(
                judge(
                    rule,
                    was,
                    now,
                    cell=key,
                    metric=metric,
                    sigmas=rules.noise_sigmas,
                    level=level,
                    power=rules.power,
                )
            )
    return rows


def count_tested(
    baseline: dict[str, CellStats], current: dict[str, CellStats], rules: GateRules
) -> int:
    """m: the figures × cells the significance test judges (the Bonferroni family)."""
    effective = rules.effective()
    return sum(
        tested(rule, was, now)
        for key in baseline.keys() & current.keys()
        for _, rule, was, now in metrics_of(effective, baseline[key], current[key])
    )


def significance_notes(
    rows: list[Comparison], rules: GateRules, tests: int, level: float | None
) -> list[str]:
    """How rows were decided: the test's level, the fallbacks, figures too noisy to resolve."""
    notes = []
    if level is not None and tests:
        notes.append(
            f"significance: a figure regresses only when worse than its tolerance AND its "
            f"one-sided t test (change / √(se_b² + se_c²), errors from within each run, "
            f"Welch degrees of freedom) is "
            f"significant at α / m = {rules.significance:g} / {tests} = {level:.2g} "
            f"(Bonferroni over {tests} figures × cells); 'detectable' is the smallest "
            f"regression caught {rules.power:.0%} of the time"
        )
        coarse = [
            row
            for row in rows
            if row.detectable is not None
            and row.allowed is not None
            and row.detectable > 1.5 * row.allowed
        ]
        if coarse:
            names = ", ".join(f"{row.cell} {row.metric}" for row in coarse[:5])
            more = f" and {len(coarse) - 5} more" if len(coarse) > 5 else ""
            notes.append(
                f"{len(coarse)} figures cannot resolve their tolerance at this sample size "
                f"(detectable > 1.5 × tolerance): {names}{more}; measure more conversations "
                "or widen their rules"
            )
    fallback = [row for row in rows if row.decided_by in ("noise band", "tolerance")]
    if fallback and rules.noise_sigmas > 0 and any(row.noise is not None for row in fallback):
        notes.append(
            f"rows without stored errors: noise band = {rules.noise_sigmas:g} × "
            "√(s_b²/n_b + s_c²/n_c) from the std over repeats (older rule)"
        )
    if any("n=1" in row.note for row in rows):
        notes.append(
            "some rows have neither stored errors nor repeats on both sides: tolerance alone "
            "decides"
        )
    return notes


def compare(
    baseline: Baseline,
    current: Snapshot,
    rules: GateRules,
    *,
    current_suite: SuiteIdentity,
    current_servers: dict[str, dict[str, Any]],
    strict_suite: bool = False,
) -> GateReport:
    """Compare every cell of the baseline and the results; raise on incomparable input."""
    notes = check_suites(baseline.suite, current_suite, strict=strict_suite)
    notes += server_notes(baseline, current_servers)
    keys = sorted(set(baseline.cells) | set(current.cells))
    tests = count_tested(baseline.cells, current.cells, rules)
    level = bonferroni_level(rules.significance, tests) if rules.significance > 0 else None
    rows: list[Comparison] = []
    for key in keys:
        rows += compare_cell(
            key,
            baseline.cells.get(key),
            current.cells.get(key),
            rules,
            failure=current.failed_cells.get(key),
            level=level,
        )
    notes += significance_notes(rows, rules, tests, level)
    return GateReport(comparisons=rows, notes=notes, suite_name=current_suite.name)
