"""The advice of a K grid: the pick at every workload × concurrency × objective, the
exclusions, the best single K, the schedule, and `advice.json`.

Inputs are saved results only: the results frame (`results.frame.load_results`), its
whole-workload cells (`results.selection.mixed_cells`), and each server's K from the
manifest (`advise.configs`). Each point's interval is the launch-level one of
`analysis.intervals.figure_interval`; the rules are `advise.pick`'s, the schedule
`advise.schedule`'s.

Objectives (`OBJECTIVES`): `throughput` (output tok/s/GPU; per server where a cell lacks
its GPU count), `interactivity` (tok/s/user = 1000 / median TPOT) and `e2e_p90` (p90 E2E
latency). The schedule follows the throughput picks of one workload (`--workload`, by
default the first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from specbench.advise.configs import AdvisedConfig
from specbench.advise.pareto import ON_FRONTIER, pareto_points
from specbench.advise.pick import (
    DISAGREE_RELATIVE,
    Candidate,
    Gain,
    Pick,
    best_single_k,
    excluded_reason,
    pick,
    with_single_k,
)
from specbench.advise.schedule import EmittedSchedule, SchedulePoint, emit_schedule
from specbench.advise.slo import BASIS, BEST, CAPACITY, LIMITED_BY, Slo, capacity_data
from specbench.advise.verify import ScheduleCheck, running_batch, schedule_checks
from specbench.analysis.aggregate import pool_acceptance
from specbench.analysis.intervals import (
    SUFFIX_CI_HIGH,
    SUFFIX_CI_LOW,
    figure_interval,
    summary_mean,
)
from specbench.analysis.table_data import THROUGHPUT_METRIC, throughput_column
from specbench.metrics.declarations import E2E_MS, INTERACTIVITY, Direction
from specbench.metrics.directions import direction_of
from specbench.results import columns as C
from specbench.results.selection import mixed_cells

if TYPE_CHECKING:
    import pandas as pd

#: Objective key → the frame column it reads (`throughput` is resolved per frame).
OBJECTIVES: dict[str, str] = {
    "throughput": C.OUTPUT_TOK_S_PER_GPU,
    "interactivity": INTERACTIVITY.name,
    "e2e_p90": f"{E2E_MS.name}_p90",
}
DEFAULT_OBJECTIVE = "throughput"


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The pick at one workload × concurrency × objective."""

    workload: str
    concurrency: int
    objective: str
    figure: str
    direction: Direction
    pick: Pick
    #: The chosen cell's measured running batch (mean over its launches); None if absent.
    running_batch: float | None
    best_single_k: int | None
    #: Every config the pick chose among at this point (exclusions left out), for the
    #: planned search (`advise.plan`) to see which Ks are measured beside the pick.
    candidates: tuple[Candidate, ...] = ()


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A cell the advice does not use, and why."""

    workload: str
    server: str
    concurrency: int
    objective: str
    reason: str


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A point where every config's launches disagreed beyond the limit: no pick."""

    workload: str
    concurrency: int
    objective: str


@dataclass(frozen=True, slots=True)
class Advice:
    """Everything `specbench advise` prints and `advice.json` holds."""

    recommendations: tuple[Recommendation, ...]
    excluded: tuple[Exclusion, ...]
    schedule: EmittedSchedule | None
    #: Why there is no schedule, or which workload it follows.
    schedule_note: str
    #: Pooled per-position acceptance by workload × server (`pool_acceptance`).
    acceptance: pd.DataFrame
    configs: Mapping[str, AdvisedConfig]
    #: Each schedule server's points against the fixed picks (requirement 5).
    schedule_checks: tuple[ScheduleCheck, ...] = ()
    #: Every point's `summary_mean` row (the frontier's and the capacity's input).
    points: pd.DataFrame | None = None
    #: The SLO the capacity was computed under, or None.
    slo: Slo | None = None
    #: Points where every config was excluded: no advice there.
    unresolved: tuple[Unresolved, ...] = ()
    #: The launch disagreement beyond which a cell was excluded.
    spread_limit: float = DISAGREE_RELATIVE


def objective_column(frame: pd.DataFrame, objective: str, servers: Sequence[str]) -> str:
    """The frame column an objective reads: throughput per GPU where every cell knows its
    GPUs, else per server (`analysis.table_data.throughput_column`)."""
    if objective == "throughput":
        return throughput_column(frame, servers)
    return OBJECTIVES[objective]


def _launch_values(group: pd.DataFrame, figure: str) -> tuple[float, ...]:
    values = group[[C.LAUNCH, figure]].dropna().groupby(C.LAUNCH)[figure].mean()
    return tuple(float(v) for v in values)


def _points(
    cells: pd.DataFrame,
    configs: Mapping[str, AdvisedConfig],
    workload: str,
    objective: str,
    figure: str,
    spread_limit: float,
) -> tuple[dict[int, list[Candidate]], dict[tuple[int, str], float | None], list[Exclusion]]:
    """Each concurrency's candidates (fixed configs with a value), running batches by
    (concurrency, server), and the exclusions."""
    candidates: dict[int, list[Candidate]] = {}
    batches: dict[tuple[int, str], float | None] = {}
    excluded: list[Exclusion] = []
    rows = cells[cells[C.WORKLOAD] == workload]
    for key, group in rows.groupby([C.CONCURRENCY, C.LABEL], sort=True):
        concurrency, server = int(key[0]), str(key[1])  # type: ignore[call-overload]
        config = configs.get(server)
        if config is None or config.k is None:
            continue
        interval = figure_interval(group, figure)
        if interval is None:
            continue
        candidate = Candidate(config.k, config.server, interval, _launch_values(group, figure))
        batches[(concurrency, config.server)] = running_batch(group)
        reason = excluded_reason(candidate, spread_limit)
        if reason is not None:
            excluded.append(Exclusion(workload, config.server, concurrency, objective, reason))
            continue
        candidates.setdefault(concurrency, []).append(candidate)
    return candidates, batches, excluded


def build_advice(
    frame: pd.DataFrame,
    configs: Mapping[str, AdvisedConfig],
    objectives: Sequence[str] = tuple(OBJECTIVES),
    schedule_workload: str | None = None,
    slo: Slo | None = None,
    spread_limit: float = DISAGREE_RELATIVE,
) -> Advice:
    """The advice over every whole-workload point of `frame` (labels are server names);
    `spread_limit`: the launch disagreement beyond which a cell is excluded."""
    cells = mixed_cells(frame)
    workloads = list(dict.fromkeys(str(w) for w in cells[C.WORKLOAD]))
    servers = [s for s in configs if s in set(cells[C.LABEL])]
    recommendations: list[Recommendation] = []
    excluded: list[Exclusion] = []
    unresolved: list[Unresolved] = []
    for workload in workloads:
        for objective in objectives:
            figure = objective_column(cells, objective, servers)
            direction = direction_of(figure)
            points, batches, dropped = _points(
                cells, configs, workload, objective, figure, spread_limit
            )
            excluded += dropped
            unresolved += [
                Unresolved(workload, c, objective)
                for c in sorted({e.concurrency for e in dropped} - set(points))
            ]
            single = best_single_k(points, direction)
            for concurrency, candidates in sorted(points.items()):
                found = pick(candidates, direction)
                if found is None:
                    continue
                found = with_single_k(found, candidates, single, direction)
                batch = batches.get((concurrency, found.chosen.server))
                recommendations.append(
                    Recommendation(
                        workload,
                        concurrency,
                        objective,
                        figure,
                        direction,
                        found,
                        batch,
                        single,
                        tuple(candidates),
                    )
                )
    schedule, note = _schedule(recommendations, configs, workloads, schedule_workload)
    acceptance = pool_acceptance(cells, [C.WORKLOAD, C.LABEL])
    checks = schedule_checks(cells, configs, recommendations)
    return Advice(
        tuple(recommendations),
        tuple(excluded),
        schedule,
        note,
        acceptance,
        configs,
        checks,
        summary_mean(cells),
        slo,
        tuple(unresolved),
        spread_limit,
    )


def _schedule(
    recommendations: Sequence[Recommendation],
    configs: Mapping[str, AdvisedConfig],
    workloads: Sequence[str],
    workload: str | None,
) -> tuple[EmittedSchedule | None, str]:
    """The schedule of one workload's throughput picks, or None and why."""
    chosen = workload or (workloads[0] if workloads else None)
    picks = [
        r for r in recommendations if r.workload == chosen and r.objective == DEFAULT_OBJECTIVE
    ]
    if not picks:
        return None, "no throughput advice to build a schedule from"
    speculative = [configs[r.pick.chosen.server].speculative for r in picks]
    templates = [s for s in speculative if s is not None]
    if not templates:
        return None, f"the baseline (K = 0) wins at every concurrency of {chosen}: no schedule"
    methods = {(s.get("method"), s.get("model")) for s in templates}
    if len(methods) > 1:
        return None, f"the picks of {chosen} span several drafts {sorted(map(str, methods))}"
    points = [SchedulePoint(r.concurrency, r.pick.chosen.k, r.running_batch) for r in picks]
    try:
        schedule = emit_schedule(points, cli_speculative_config(templates[0]))
    except ValueError as error:
        return None, str(error)
    if schedule is None:
        return None, f"the baseline (K = 0) wins at every concurrency of {chosen}: no schedule"
    on = (
        "each cell's measured running batch"
        if schedule.mapped_on == "running_batch"
        else "the client's concurrency (these results predate the running-batch figure)"
    )
    return schedule, f"from the throughput picks of {chosen}, placed at {on}"


def cli_speculative_config(table: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved speculative table as vLLM's `--speculative-config` mapping: unset keys
    left out, `extra` flattened (`launch.argv.speculative_config_dict`)."""
    from specbench.launch.argv import speculative_config_dict
    from specbench.launch.config import SpeculativeConfig

    return speculative_config_dict(SpeculativeConfig.model_validate(dict(table)))


def _records(
    frame: pd.DataFrame, columns: Mapping[str, str], points: pd.DataFrame
) -> list[dict[str, Any]]:
    """Rows of `frame` as JSON records, columns renamed (`columns`: frame → JSON key), each
    led by its workload key (found from its dataset view in `points`)."""
    import math

    workload_of = dict(zip(points[C.VIEW], points[C.WORKLOAD], strict=True))
    rows = []
    for record in frame.to_dict(orient="records"):
        row: dict[str, Any] = {"workload": workload_of.get(record.get(C.VIEW))}
        for column, key in columns.items():
            value = record.get(column)
            if value is not None and hasattr(value, "item"):
                value = value.item()
            row[key] = None if isinstance(value, float) and not math.isfinite(value) else value
        rows.append(row)
    return rows


def _frontier_json(advice: Advice) -> list[dict[str, Any]]:
    """The Pareto frontier points (`advise.pareto`): workload, server, concurrency, both axes."""
    if advice.points is None or not len(advice.points):
        return []
    every = pareto_points(advice.points)
    if not len(every):
        return []
    on = every[every[ON_FRONTIER]]
    throughput = str(on[THROUGHPUT_METRIC].iloc[0]) if len(on) else C.OUTPUT_TOK_S_PER_GPU
    return _records(
        on,
        {
            C.LABEL: "server",
            C.CONCURRENCY: "concurrency",
            THROUGHPUT_METRIC: "throughput_figure",
            throughput: "throughput",
            INTERACTIVITY.name: "interactivity_tok_s_per_user",
        },
        advice.points,
    )


def _slo_json(advice: Advice) -> dict[str, Any] | None:
    """Capacity under the SLO of every config (`advise.slo`); None without an SLO."""
    if advice.slo is None or advice.points is None:
        return None
    data = capacity_data(advice.points, advice.slo)
    throughput = str(data[THROUGHPUT_METRIC].iloc[0]) if len(data) else C.OUTPUT_TOK_S_PER_GPU
    return {
        "bounds": advice.slo.describe(),
        "source": advice.slo.source,
        "capacity": _records(
            data,
            {
                C.LABEL: "server",
                CAPACITY: "capacity_concurrency",
                BASIS: "basis",
                throughput: "throughput",
                throughput + SUFFIX_CI_LOW: "throughput_ci_low",
                throughput + SUFFIX_CI_HIGH: "throughput_ci_high",
                LIMITED_BY: "limited_by",
                BEST: "best_under_slo",
            },
            advice.points,
        ),
    }


def _gain_json(found: Gain | None) -> tuple[float | None, list[float | None] | None]:
    if found is None:
        return None, None
    return found.value, [found.low, found.high]


def advice_json(advice: Advice) -> dict[str, Any]:
    """`advice.json`: the issue's contract (recommendations, schedule, excluded) plus the
    figure, the gains' intervals, the best single K and the running batch."""
    rows = []
    for r in advice.recommendations:
        chosen = r.pick.chosen
        gain_k0, gain_k0_ci = _gain_json(r.pick.gain_vs_k0)
        gain_single, gain_single_ci = _gain_json(r.pick.gain_vs_single_k)
        rows.append(
            {
                "workload": r.workload,
                "concurrency": r.concurrency,
                "objective": r.objective,
                "figure": r.figure,
                "k": chosen.k,
                "server": chosen.server,
                "value": chosen.interval.value,
                "ci_low": chosen.interval.low,
                "ci_high": chosen.interval.high,
                "ci_kind": chosen.interval.kind,
                "launches": chosen.interval.launches,
                "gain_vs_k0": gain_k0,
                "gain_vs_k0_ci": gain_k0_ci,
                "best_single_k": r.best_single_k,
                "gain_vs_best_single_k": gain_single,
                "gain_vs_best_single_k_ci": gain_single_ci,
                "tied_with": list(r.pick.tied_with),
                "best_k_before_ties": r.pick.best_k,
                "running_batch": r.running_batch,
            }
        )
    schedule = advice.schedule
    return {
        "recommendations": rows,
        "schedule": schedule.speculative_config if schedule else None,
        "schedule_notes": {
            "note": advice.schedule_note,
            "mapped_on": schedule.mapped_on if schedule else None,
            "placed": [{"concurrency": c, "batch": b, "k": k} for c, b, k in schedule.placed]
            if schedule
            else [],
            "caveats": list(schedule.caveats) if schedule else [],
        },
        "schedule_checks": [
            {
                "workload": c.workload,
                "concurrency": c.concurrency,
                "objective": c.objective,
                "server": c.server,
                "value": c.interval.value,
                "ci_low": c.interval.low,
                "ci_high": c.interval.high,
                "best_fixed_k": c.best_fixed.k if c.best_fixed else None,
                "best_fixed_value": c.best_fixed.interval.value if c.best_fixed else None,
                "vs_best_fixed": _gain_json(c.vs_best_fixed)[0],
                "vs_best_fixed_ci": _gain_json(c.vs_best_fixed)[1],
                "vs_k0": _gain_json(c.vs_k0)[0],
                "vs_k0_ci": _gain_json(c.vs_k0)[1],
                "verdict": c.verdict,
                "effective_k": c.effective_k,
                "running_batch": c.running_batch,
                "per_step_drafted": (
                    {str(k): v for k, v in c.per_step_drafted.items()}
                    if c.per_step_drafted
                    else None
                ),
            }
            for c in advice.schedule_checks
        ],
        "frontier": _frontier_json(advice),
        "slo": _slo_json(advice),
        "unresolved": [asdict(u) for u in advice.unresolved],
        "excluded": [asdict(e) for e in advice.excluded],
    }
