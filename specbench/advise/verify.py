"""A measured schedule against the fixed picks (issue 40, requirement 5).

A server that names a K schedule is not a candidate of the pick (it has no one K): at each
point the advice measured, its value is set beside the advised fixed config's and the
baseline's, with the ratios' intervals, a verdict by the pick's tie rule read both ways
(`wins`, `ties`, `loses`), and what K it drafted: the effective K pooled from vLLM's counters,
the measured running batch, and the share of verify steps at each K (`per_step_drafted`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from specbench.advise.configs import AdvisedConfig
from specbench.advise.pick import TIE_RELATIVE, Candidate, Gain, advantage, gain
from specbench.analysis.intervals import figure_interval
from specbench.results import columns as C
from specbench.stats.launches import Interval

if TYPE_CHECKING:
    import pandas as pd

    from specbench.advise.advice import Recommendation


@dataclass(frozen=True, slots=True)
class ScheduleCheck:
    """A schedule server measured at one point, against the best fixed K and the baseline."""

    workload: str
    concurrency: int
    objective: str
    server: str
    interval: Interval
    #: The fixed config the pick advised at this point (it may be the baseline).
    best_fixed: Candidate | None
    #: The schedule's improvement over the advised fixed K and over K = 0 (`pick.gain`).
    vs_best_fixed: Gain | None
    vs_k0: Gain | None
    #: `wins`, `ties` or `loses` against the advised fixed K, by the pick's tie rule.
    verdict: str
    #: Δ draft tokens / Δ drafts over the cell's windows (pooled over its launches).
    effective_k: float | None
    running_batch: float | None
    #: K → verify steps over the cell's windows (`detailed` metrics), else None.
    per_step_drafted: dict[int, int] | None


def running_batch(group: pd.DataFrame) -> float | None:
    """The mean of the cells' measured running batches; None where none was recorded."""
    if C.RUNNING_BATCH_MEAN not in group.columns:
        return None
    values = group[C.RUNNING_BATCH_MEAN].dropna()
    return float(values.mean()) if len(values) else None


def _step_counts(group: pd.DataFrame) -> dict[int, int] | None:
    """Σ of the cells' `per_step_drafted_counts` (JSON text in the frame); None if none."""
    if C.PER_STEP_DRAFTED_COUNTS not in group.columns:
        return None
    total: dict[int, int] = {}
    found = False
    for text in group[C.PER_STEP_DRAFTED_COUNTS].dropna():
        found = True
        for k, steps in json.loads(str(text)).items():
            total[int(k)] = total.get(int(k), 0) + int(steps)
    return dict(sorted(total.items())) if found else None


def _pooled_k(group: pd.DataFrame) -> float | None:
    """Σ Δ draft tokens / Σ Δ drafts over the cells (a ratio of sums, never a mean of K)."""
    if C.NUM_DRAFTS not in group.columns:
        return None
    drafts = group[C.NUM_DRAFTS].dropna().sum()
    tokens = group[C.NUM_DRAFT_TOKENS].dropna().sum()
    return float(tokens / drafts) if drafts > 0 else None


def _verdict(ratio: Interval | None) -> str:
    """`ties` when the schedule's advantage over the advised fixed K is within 1% of 1 or
    its interval holds 1; else `wins` or `loses` (the pick's tie rule, both ways)."""
    if ratio is None:
        return "unknown"
    if abs(ratio.value - 1.0) < TIE_RELATIVE:
        return "ties"
    if ratio.low is not None and ratio.high is not None and ratio.low <= 1.0 <= ratio.high:
        return "ties"
    return "wins" if ratio.value > 1.0 else "loses"


def schedule_checks(
    cells: pd.DataFrame,
    configs: Mapping[str, AdvisedConfig],
    recommendations: Sequence[Recommendation],
) -> tuple[ScheduleCheck, ...]:
    """Every schedule server's point against the advised fixed K and the baseline there."""
    schedules = [s for s, c in configs.items() if c.k is None]
    checks: list[ScheduleCheck] = []
    for r in recommendations:
        rows = cells[(cells[C.WORKLOAD] == r.workload) & (cells[C.CONCURRENCY] == r.concurrency)]
        baseline = next(
            (
                figure_interval(rows[rows[C.LABEL] == s], r.figure)
                for s, c in configs.items()
                if c.k == 0 and s in set(rows[C.LABEL])
            ),
            None,
        )
        for server in schedules:
            group = rows[rows[C.LABEL] == server]
            interval = figure_interval(group, r.figure) if len(group) else None
            if interval is None:
                continue
            best = r.pick.chosen
            versus = gain(interval, best.interval, r.direction)
            verdict = _verdict(advantage(interval, best.interval, r.direction))
            checks.append(
                ScheduleCheck(
                    r.workload,
                    r.concurrency,
                    r.objective,
                    server,
                    interval,
                    best,
                    versus,
                    gain(interval, baseline, r.direction) if baseline is not None else None,
                    verdict,
                    _pooled_k(group),
                    running_batch(group),
                    _step_counts(group),
                )
            )
    return tuple(checks)
