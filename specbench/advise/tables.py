"""The advice as report tables (`analysis.table.Table`): what `specbench advise` prints and
the report's "Which K to ship" section shows, from one `Advice`.

- `advice_<workload>_<objective>`: per concurrency, the advised K with its interval, its
  gain over K = 0 and over the best single K, the Ks it tied with.
- `acceptance_by_k_<workload>`: per K, the AL and each position's acceptance (accepted
  drafts at that position per verify step: the tokens the position adds), so the positions
  that stop paying are visible beside the pick.
- `k_schedule`: the emitted schedule's ranges, its paste-ready `--speculative-config` and
  caveats as footnotes.
- `advice_excluded`: the cells left out and why.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import asdict

from specbench.advise.advice import Advice, Recommendation
from specbench.advise.pareto import pareto_frontier, split_of
from specbench.advise.pick import Gain
from specbench.advise.slo import capacity_table
from specbench.advise.verify import ScheduleCheck
from specbench.analysis.table import Table
from specbench.analysis.tables import TableUnavailable
from specbench.common.naming import slug
from specbench.metrics.declarations import figure_of
from specbench.results import columns as C
from specbench.stats.launches import KIND_WORDS, Interval

#: How each objective is titled.
OBJECTIVE_TITLES = {
    "throughput": "output throughput",
    "interactivity": "interactivity (1000 / median TPOT)",
    "e2e_p90": "p90 E2E latency",
}


def _rule(limit: float) -> str:
    return (
        "Ties go to the smaller K: a K whose gap to the best is under 1% or whose 95% "
        "interval of the ratio reaches 1 ties; a cell whose launches disagree by more than "
        f"{limit:.0%} is excluded (advise/pick.py)."
    )


def _unit(figure: str) -> str:
    declared = figure_of(figure)
    return declared.unit if declared is not None else ""


def _number(value: float, figure: str) -> str:
    """A value in its figure's unit, without the unit: `1,907.8`, `2,151`, `8.41`."""
    if _unit(figure) == "ms":
        return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return f"{value:,.1f}"


def _gain(found: Gain | None) -> str:
    if found is None:
        return "—"
    text = f"{found.value:+.1%}"
    if found.low is not None and found.high is not None:
        text += f" [{found.low:+.1%}, {found.high:+.1%}]"
    return text


def _value(r: Recommendation) -> str:
    """`1,907.8 [1,906.7–1,909.0] tok/s/GPU`."""
    return f"{_bounded(r.pick.chosen.interval, r.figure)} {_unit(r.figure)}".strip()


def pick_table(advice: Advice, workload: str, objective: str) -> Table | None:
    """The picks of one workload and objective; None if there are none."""
    import pandas as pd

    rows = [r for r in advice.recommendations if (r.workload, r.objective) == (workload, objective)]
    if not rows:
        return None
    single = rows[0].best_single_k
    columns = (
        "Concurrency",
        "Running batch",
        "Advised K",
        "Value [95% CI]",
        "vs K = 0",
        f"vs best single K ({'K = ' + str(single) if single is not None else 'none'})",
        "Tied with",
    )
    display = tuple(
        (
            str(r.concurrency),
            f"{r.running_batch:.1f}" if r.running_batch is not None else "—",
            f"{r.pick.chosen.k} ({r.pick.chosen.server})",
            _value(r),
            _gain(r.pick.gain_vs_k0) if r.pick.chosen.k != 0 else "(the baseline)",
            "(this K)" if r.pick.chosen.k == single else _gain(r.pick.gain_vs_single_k),
            ", ".join(f"K = {k}" for k in r.pick.tied_with) or "—",
        )
        for r in rows
    )
    data = pd.DataFrame(
        [
            {
                C.WORKLOAD: r.workload,
                C.CONCURRENCY: r.concurrency,
                "objective": r.objective,
                "figure": r.figure,
                "k": r.pick.chosen.k,
                "server": r.pick.chosen.server,
                "value": r.pick.chosen.interval.value,
                "ci_low": r.pick.chosen.interval.low,
                "ci_high": r.pick.chosen.interval.high,
                "gain_vs_k0": r.pick.gain_vs_k0.value if r.pick.gain_vs_k0 else None,
                "gain_vs_best_single_k": (
                    r.pick.gain_vs_single_k.value if r.pick.gain_vs_single_k else None
                ),
                "best_single_k": r.best_single_k,
                "tied_with": ",".join(map(str, r.pick.tied_with)),
                "running_batch": r.running_batch,
            }
            for r in rows
        ]
    )
    kinds = sorted({(r.pick.chosen.interval.kind, r.pick.chosen.interval.launches) for r in rows})
    notes = [
        "Intervals: "
        + "; ".join(
            f"{KIND_WORDS.get(kind, kind)} ({n} launch{'es' if n != 1 else ''})"
            for kind, n in kinds
        )
        + ".",
        f"Figure: {rows[0].figure} ({'higher' if rows[0].direction == 'higher' else 'lower'} "
        "is better). Gains are in that direction, with the 95% interval of the ratio.",
        _rule(advice.spread_limit),
        "Running batch: the time-weighted mean of vllm:num_requests_running over the advised "
        "cell's window (what a schedule's ranges are in).",
    ]
    return Table(
        name=f"advice_{slug(workload)}_{objective}",
        title=f"Which K to ship: {workload}, {OBJECTIVE_TITLES.get(objective, objective)}",
        columns=columns,
        rows=display,
        data=data,
        footnotes=tuple(notes),
    )


def acceptance_table(advice: Advice, workload: str) -> Table | None:
    """Per K of one workload: AL and each position's acceptance, pooled over its cells."""
    pooled = advice.acceptance
    if pooled.empty or C.WORKLOAD not in pooled.columns:
        return None
    rows = pooled[pooled[C.WORKLOAD] == workload]
    fixed = [(c.k, s) for s, c in advice.configs.items() if c.k and s in set(rows[C.LABEL])]
    if not fixed:
        return None
    fixed.sort()
    positions = max(k for k, _ in fixed)
    columns = ("K", "AL", *(f"pos {i}" for i in range(1, positions + 1)))
    display = []
    records = []
    for k, server in fixed:
        row = rows[rows[C.LABEL] == server].iloc[0]
        values = [row.get(f"{C.PER_POSITION_PREFIX}{i}") for i in range(1, k + 1)]
        display.append(
            (
                f"{k} ({server})",
                f"{row[C.ACCEPTANCE_LENGTH]:.3f}",
                *(f"{v:.3f}" if v is not None and v == v else "—" for v in values),
                *([""] * (positions - k)),
            )
        )
        records.append(
            {"k": k, "server": server, C.ACCEPTANCE_LENGTH: row[C.ACCEPTANCE_LENGTH]}
            | {f"{C.PER_POSITION_PREFIX}{i}": v for i, v in enumerate(values, start=1)}
        )
    import pandas as pd

    return Table(
        name=f"acceptance_by_k_{slug(workload)}",
        title=f"Per-position acceptance by K: {workload}",
        columns=columns,
        rows=tuple(display),
        data=pd.DataFrame(records),
        footnotes=(
            "pos i: accepted drafts at position i per verify step, pooled over the K's cells "
            "(step-weighted, vLLM's counters): the tokens position i adds to each step. AL = "
            "1 + their sum. A position that adds less than its draft and verify cost stops "
            "paying; the pick above measures where.",
        ),
    )


def schedule_table(advice: Advice) -> Table | None:
    """The emitted schedule's ranges, with its JSON and caveats as footnotes."""
    schedule = advice.schedule
    if schedule is None:
        return None
    import pandas as pd

    display = tuple(
        (f"{start}–{end}" if end != start else str(start), str(k))
        for start, end, k in schedule.ranges
    )
    config = json.dumps(schedule.speculative_config, separators=(",", ":"))
    placed = "; ".join(f"c = {c} at batch {b:.1f} → K = {k}" for c, b, k in schedule.placed)
    return Table(
        name="k_schedule",
        title="K schedule (vLLM num_speculative_tokens_per_batch_size)",
        columns=("Requests in the step", "K"),
        rows=display,
        data=pd.DataFrame(
            [{"start": s, "end": e, "k": k} for s, e, k in schedule.ranges],
        ),
        footnotes=(
            f"--speculative-config '{config}'",
            f"{advice.schedule_note}: {placed}.",
            *(f"Caveat: {c}." for c in schedule.caveats),
        ),
    )


def _bounded(interval: Interval, figure: str) -> str:
    """`1,907.8 [1,906.7–1,909.0]`: a value and its bounds, without the unit."""
    text = _number(interval.value, figure)
    if interval.low is not None and interval.high is not None and math.isfinite(interval.high):
        text += f" [{_number(interval.low, figure)}–{_number(interval.high, figure)}]"
    return text


def _step_shares(counts: dict[int, int] | None) -> str:
    """`K 1: 94%, K 5: 6%`: the share of verify steps at each K."""
    if not counts:
        return "—"
    total = sum(counts.values())
    return ", ".join(f"K {k}: {n / total:.0%}" for k, n in counts.items())


def _check_row(check: ScheduleCheck, figure: str) -> tuple[str, ...]:
    best = check.best_fixed
    return (
        str(check.concurrency),
        check.server,
        _bounded(check.interval, figure),
        f"{best.k} ({_bounded(best.interval, figure)})" if best else "—",
        _gain(check.vs_best_fixed),
        _gain(check.vs_k0),
        check.verdict,
        f"{check.effective_k:.2f}" if check.effective_k is not None else "—",
        f"{check.running_batch:.1f}" if check.running_batch is not None else "—",
        _step_shares(check.per_step_drafted),
    )


def _check_record(check: ScheduleCheck) -> dict[str, object]:
    return {
        C.WORKLOAD: check.workload,
        C.CONCURRENCY: check.concurrency,
        "server": check.server,
        "value": check.interval.value,
        "ci_low": check.interval.low,
        "ci_high": check.interval.high,
        "best_fixed_k": check.best_fixed.k if check.best_fixed else None,
        "vs_best_fixed": check.vs_best_fixed.value if check.vs_best_fixed else None,
        "vs_k0": check.vs_k0.value if check.vs_k0 else None,
        "verdict": check.verdict,
        "effective_k": check.effective_k,
        "running_batch": check.running_batch,
    }


def schedule_check_table(advice: Advice, workload: str, objective: str) -> Table | None:
    """Each schedule server of one workload against the advised fixed K and the baseline."""
    checks = [
        c for c in advice.schedule_checks if (c.workload, c.objective) == (workload, objective)
    ]
    if not checks:
        return None
    import pandas as pd

    figure = next(
        r.figure
        for r in advice.recommendations
        if (r.workload, r.objective) == (workload, objective)
    )
    losing = sorted({c.concurrency for c in checks if c.verdict == "loses"})
    where = (
        f"It loses at concurrency {', '.join(map(str, losing))}."
        if losing
        else "It loses nowhere measured."
    )
    return Table(
        name=f"schedule_check_{slug(workload)}_{objective}",
        title=f"The schedule measured: {workload}, {OBJECTIVE_TITLES.get(objective, objective)}",
        columns=(
            "Concurrency",
            "Server",
            f"Value [95% CI] ({_unit(figure)})",
            "Advised fixed K",
            "vs advised fixed K",
            "vs K = 0",
            "Verdict",
            "Effective K",
            "Running batch",
            "K per verify step",
        ),
        rows=tuple(_check_row(c, figure) for c in checks),
        data=pd.DataFrame([_check_record(c) for c in checks]),
        footnotes=(
            where,
            "Verdict: the pick's tie rule both ways (within 1%, or the ratio's 95% interval "
            "holds 1). Effective K: Δ draft tokens / Δ drafts over the cell's windows (vLLM's "
            "counters), and K per verify step: the share of verify steps at each K "
            "(per_step_drafted, with --per-request-spec-decode-metrics detailed): both count "
            "only steps that drafted, so a schedule's K = 0 steps are in neither.",
        ),
    )


def excluded_table(advice: Advice) -> Table | None:
    """The cells the advice left out, and why."""
    if not advice.excluded:
        return None
    import pandas as pd

    rows = tuple(
        (e.workload, e.server, str(e.concurrency), e.objective, e.reason) for e in advice.excluded
    )
    unresolved = [f"{u.workload} c={u.concurrency} ({u.objective})" for u in advice.unresolved]
    notes = (
        (
            "No advice at "
            + ", ".join(unresolved)
            + ": every config's launches disagree there. Quiet the machine, or measure "
            "more launches, or accept a wider spread (specbench advise --max-launch-spread).",
        )
        if unresolved
        else ()
    )
    return Table(
        footnotes=notes,
        name="advice_excluded",
        title="Cells the advice did not use",
        columns=("Workload", "Server", "Concurrency", "Objective", "Why"),
        rows=rows,
        data=pd.DataFrame([asdict(e) for e in advice.excluded]),
    )


def frontier_tables(advice: Advice) -> Iterator[Table]:
    """The Pareto frontier of each workload and, under an SLO, every config's capacity: the
    report has them as sections of their own; `specbench advise` prints them after the picks."""
    points = advice.points
    if points is None or not len(points):
        return
    views = list(dict.fromkeys(str(v) for v in points[C.VIEW]))
    for view in views:
        try:
            yield pareto_frontier(points, view, split_of(points, view))
        except TableUnavailable:
            continue
    if advice.slo is not None:
        try:
            yield capacity_table(points, advice.slo, {v: v for v in views})
        except TableUnavailable:
            return


def advice_tables(advice: Advice, *, frontier: bool = False) -> Iterator[Table]:
    """Every table of the advice, in the order they print; with `frontier`, the Pareto
    frontier and the capacity under the SLO after them (`frontier_tables`)."""
    workloads = list(dict.fromkeys(r.workload for r in advice.recommendations))
    objectives = list(dict.fromkeys(r.objective for r in advice.recommendations))
    for workload in workloads:
        for objective in objectives:
            table = pick_table(advice, workload, objective)
            if table is not None:
                yield table
            check = schedule_check_table(advice, workload, objective)
            if check is not None:
                yield check
        acceptance = acceptance_table(advice, workload)
        if acceptance is not None:
            yield acceptance
    for table in (schedule_table(advice), excluded_table(advice)):
        if table is not None:
            yield table
    if frontier:
        yield from frontier_tables(advice)
