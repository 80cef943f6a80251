"""Cell-by-cell comparison of current results with a baseline: one verdict per cell × metric.

A figure with ≥ 3 server launches on both sides is judged on its launch values
(`gate.launches`): a regression is a worsening of the median launch value beyond both the
noise (the larger of k × √(σ_b² + σ_c²), σ = 1.4826 × MAD of each side's launch values,
and z × √(se_L,b² + se_L,c²), one launch's own standard errors at the test's level α / m)
and the rule's material threshold (2% of the baseline's median by default). Otherwise the
within-launch rule below decides, and the row says which rule it used
(`MetricComparison.rule`).

Within launches, a metric is a regression only when it got worse by more than its
tolerance AND the worsening is significant (`stats.significance`): a one-sided t test of
the change against the standard error of the difference, √(se_b² + se_c²), from each
side's stored errors (within-run cluster bootstrap, combined with the spread over
repeats), at level α / m with m the figures × cells with errors stored on both sides,
launch-level rows included (Bonferroni). Each row
records which rule decided it, the interval of the change at its level, and the smallest
worsening the test catches with the configured power (`detectable`).

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

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.gate.baseline import Baseline, SuiteIdentity
from specbench.gate.rules import CATEGORY_FAMILY, PER_POSITION_FAMILY, GateRules, MetricRule
from specbench.gate.snapshot import CellStats, MetricStats, Snapshot
from specbench.gate.suites import check_suites, server_notes
from specbench.gate.verdict import (
    ALL_METRICS,
    FAILED_REPEATS,
    PASSING,
    DecidedBy,
    MetricComparison,
    Verdict,
    allowed_worsening,
    judge,
    noise_band,
    side_errors,
    tested,
)
from specbench.results.columns import ACCEPTANCE_LENGTH, PER_POSITION_PREFIX
from specbench.stats.launches import MIN_LAUNCHES
from specbench.stats.significance import bonferroni_level

__all__ = [
    "ALL_METRICS",
    "FAILED_REPEATS",
    "PASSING",
    "DecidedBy",
    "GateReport",
    "MetricComparison",
    "Verdict",
    "allowed_worsening",
    "compare",
    "compare_cell",
    "judge",
    "metrics_of",
    "noise_band",
    "side_errors",
    "tested",
]


@dataclass(frozen=True)
class GateReport:
    """Every comparison, plus notes that explain the setting (suite, servers, noise)."""

    comparisons: list[MetricComparison]
    notes: list[str] = field(default_factory=list)
    suite_name: str | None = None

    def with_verdict(self, *verdicts: str) -> list[MetricComparison]:
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
) -> list[MetricComparison]:
    """Every row of one cell (present in the baseline, the results, or both).

    `level`: the per-figure significance level (α / m over the whole gate run).
    """
    if baseline is None:
        assert current is not None
        return [_unjudged(key, ALL_METRICS, "new", note="not in the baseline: not gated")]
    rows: list[MetricComparison] = []
    if current is not None:
        _check_cell(key, baseline, current)
        if failure:
            note = f"a repeat failed ({failure}); the others are compared"
            rows.append(_unjudged(key, FAILED_REPEATS, "missing", note=note))
    for metric, rule, was, now in metrics_of(rules.effective(), baseline, current):
        if now is None and was is None:
            continue  # not measured on either side, e.g. AL of a server without speculation
        if now is None:
            if current is None:
                note = f"cell failed: {failure}" if failure else "cell not in the results"
            else:
                note = "metric not in the results"
            rows.append(
                _unjudged(
                    key, metric, "missing", rule, note, baseline=was, cell_missing=current is None
                )
            )
        elif was is None and rule.max is None:
            note = "not in the baseline: not gated"
            rows.append(_unjudged(key, metric, "new", rule, note, current=now))
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
                    launch_sigmas=rules.launch_sigmas,
                )
            )
    return rows


def _unjudged(
    key: str,
    metric: str,
    verdict: Verdict,
    rule: MetricRule | None = None,
    note: str = "",
    *,
    baseline: MetricStats | None = None,
    current: MetricStats | None = None,
    cell_missing: bool = False,
) -> MetricComparison:
    """A row no test decided (`new` or `missing`), with the rule it would have taken."""
    return MetricComparison(
        cell=key,
        metric=metric,
        verdict=verdict,
        direction=rule.direction if rule is not None else "",
        tolerance=rule.describe() if rule is not None else "",
        note=note,
        baseline=baseline,
        current=current,
        cell_missing=cell_missing,
    )


def count_tested(
    baseline: dict[str, CellStats], current: dict[str, CellStats], rules: GateRules
) -> int:
    """m: the figures × cells with errors stored on both sides (the Bonferroni family:
    the rows the significance test judges and the launch-level rows' sampling terms)."""
    effective = rules.effective()
    return sum(
        tested(rule, was, now)
        for key in baseline.keys() & current.keys()
        for _, rule, was, now in metrics_of(effective, baseline[key], current[key])
    )


def significance_notes(
    rows: list[MetricComparison], rules: GateRules, tests: int, level: float | None
) -> list[str]:
    """How rows were decided: the test's level, the fallbacks, figures too noisy to resolve."""
    notes = []
    if level is not None and any(row.decided_by == "significance" for row in rows):
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
    by_launches = [row for row in rows if row.launches is not None]
    if by_launches:
        notes.append(
            f"launch-level rule ({len(by_launches)} rows with ≥ {MIN_LAUNCHES} launches on "
            "both sides): each launch's value is its repeats' mean (acceptance pooled); a "
            "row regresses when the median launch value is worse than its material "
            f"threshold AND than the noise, the larger of {rules.launch_sigmas:g} × "
            "√(σ_b² + σ_c²) (σ = 1.4826 × MAD of each side's launch values) and z × "
            "√(se_L,b² + se_L,c²) (se_L: one launch's own standard error; z: the one-sided "
            + (
                f"normal bar at α / m = {rules.significance:g} / {tests} = {level:.2g}, "
                f"Bonferroni over {tests} figures × cells)"
                if level is not None
                else f"z = k = {rules.launch_sigmas:g}: the significance test is off)"
            )
        )
    too_few = [row for row in rows if row.rule.startswith("within-launch (")]
    if too_few:
        notes.append(
            f"{len(too_few)} rows had several launches but fewer than {MIN_LAUNCHES} on a "
            "side: judged by the within-launch rule"
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
    rows: list[MetricComparison] = []
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
