"""The planned K search (`specbench advise --plan`): the next cells worth measuring, not the
whole grid.

From the advice of a coarse K set (e.g. K ∈ {1, 3, 6} and the baseline), at each workload ×
concurrency × objective the pick's neighbours K − 1 and K + 1 are what could still beat it.
K − 1 is the baseline for K = 1 (measured with every grid); K + 1 stops at `max_k` (by
default the sweep's largest K). A pick is

- **bracketed** when each neighbour is measured at that point (or lies past an edge): an
  unmeasured neighbour is planned, as the sweep names it (`NAME-kN`);
- **resolved** when, against each measured neighbour, it wins beyond the tie rule or the
  tie rule settles it (`advise.pick`: within 1%, the smaller K). The one tie more data can
  settle is a gap of 1% or more whose interval still reaches 1: there both cells get one
  more launch, up to `max_launches` (by default the most any cell has, so nothing is added
  unless asked); past it the rule keeps the smaller K, and the line says so.

A neighbour whose cell is excluded (its launches disagree, `advise.pick`) counts as measured:
measuring it again in the same way would not make it usable. The plan's cells are points
(server, workload, concurrency); `run --plan` measures each at every launch the suite asks,
raised to the plan's `launches` when a close pair asked for more. Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from specbench.advise.advice import Advice, Recommendation
from specbench.advise.configs import AdvisedConfig
from specbench.advise.pick import TIE_RELATIVE, Candidate, advantage
from specbench.metrics.declarations import Direction
from specbench.run.search_plan import PlannedCell, SearchPlanFile
from specbench.suite.sweep import swept_name

NOTHING_LEFT = "Nothing left: every pick is bracketed and resolved"


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """The next step of a planned K search."""

    #: The K-swept server whose list grows, e.g. `eagle3`.
    sweep: str
    #: The sweep's K list after this step (sorted; the Ks already swept kept).
    ks: tuple[int, ...]
    #: The points to measure: (server, workload, concurrency), in workload, concurrency, K
    #: order, each once.
    cells: tuple[tuple[str, str, int], ...]
    #: Launches to raise the suite to for a close pair; None: the suite's own.
    launches: int | None
    #: One line per workload × concurrency × objective: what its pick needs, and why.
    lines: tuple[str, ...]

    @property
    def done(self) -> bool:
        """Whether every pick is bracketed and resolved."""
        return not self.cells


@dataclass(frozen=True, slots=True)
class _Step:
    """What one point's pick needs: Ks to add, or more launches of a pair (by K)."""

    add: tuple[int, ...]
    more_launches: tuple[Candidate, ...]
    launches: int | None
    line: str


def sweep_of(configs: Mapping[str, AdvisedConfig]) -> str:
    """The one K-swept server of the advised configs. ValueError when there is none (a
    plan grows a sweep) or several (which to grow is not ours to guess)."""
    sweeps = sorted({c.sweep for c in configs.values() if c.sweep is not None})
    if not sweeps:
        raise ValueError(
            "no K sweep in these results (num_speculative_tokens = [1, 3, 6] on a "
            "speculative server): a plan grows a sweep's K list"
        )
    if len(sweeps) > 1:
        raise ValueError(f"several K sweeps ({', '.join(sweeps)}): a plan grows one")
    return sweeps[0]


def _ks(ks: Sequence[int] | set[int]) -> str:
    return ", ".join(str(k) for k in sorted(ks))


def _compare(
    chosen: Candidate,
    other: Candidate,
    direction: Direction,
    max_launches: int,
) -> tuple[str, int | None]:
    """How the pick stands against one measured neighbour, in words, and the launches to
    raise the pair to when only more launches can tell them apart (else None)."""
    chosen_ahead = (
        chosen.interval.value >= other.interval.value
        if direction == "higher"
        else chosen.interval.value <= other.interval.value
    )
    better, worse = (chosen, other) if chosen_ahead else (other, chosen)
    ratio = advantage(better.interval, worse.interval, direction)
    if ratio is None:
        return f"K {other.k} has no comparable value", None
    gap = ratio.value - 1.0
    if gap < TIE_RELATIVE:
        return f"ties K {other.k} within 1% (the smaller K is kept)", None
    if ratio.low is not None and ratio.low <= 1.0:
        have = min(chosen.interval.launches, other.interval.launches)
        if have < max_launches:
            return f"K {other.k} only {gap:.1%} apart, intervals overlap", have + 1
        return (
            f"ties K {other.k} through its interval ({gap:.1%} apart, {have} launches, the "
            "most allowed; the smaller K is kept)",
            None,
        )
    if better is chosen:
        return f"{gap:+.1%} over K {other.k}", None
    return f"K {other.k} {gap:.1%} ahead but tied with the best (the smaller K is kept)", None


def _step(
    r: Recommendation,
    excluded_ks: set[int],
    max_k: int,
    max_launches: int,
) -> _Step:
    """What the pick at one point needs (module docstring)."""
    chosen = r.pick.chosen
    k = chosen.k
    by_k = {c.k: c for c in r.candidates}
    measured = set(by_k) | excluded_ks
    neighbours = [n for n in (k - 1, k + 1) if 0 <= n <= max(max_k, 1)]
    missing = tuple(n for n in neighbours if n not in measured)
    edge = f"; K {k} is the largest allowed (--max-k {max_k})" if k >= max_k else ""
    if missing:
        line = f"best K {k} (K {_ks(measured)} measured{edge}): add K {_ks(missing)} to bracket it"
        return _Step(missing, (), None, line)
    words: list[str] = []
    pair: list[Candidate] = []
    launches: int | None = None
    for n in neighbours:
        other = by_k.get(n)
        if other is None:
            words.append(f"K {n} excluded (its launches disagree)")
            continue
        said, more = _compare(chosen, other, r.direction, max_launches)
        words.append(said)
        if more is not None:
            pair += [chosen, other] if chosen not in pair else [other]
            launches = max(launches or 0, more)
    bracket = f"bracketed by K {_ks(neighbours)}" if neighbours else "no neighbour"
    if pair:
        line = (
            f"best K {k}, {bracket}: {'; '.join(words)}: add launch {launches} of K "
            f"{_ks({c.k for c in pair})} to resolve it"
        )
        return _Step((), tuple(pair), launches, line)
    return _Step((), (), None, f"best K {k}, {bracket}{edge}: {'; '.join(words)}: resolved")


def _server(k: int, sweep: str, configs: Mapping[str, AdvisedConfig]) -> str:
    """The server that measures K: the baseline for 0, else the sweep's `NAME-kN`."""
    if k == 0:
        return next(name for name, c in configs.items() if c.k == 0)
    return swept_name(sweep, k)


def plan_search(
    advice: Advice,
    sweep: str,
    *,
    max_k: int | None = None,
    max_launches: int | None = None,
) -> SearchPlan:
    """The next step of the search over `advice` (every recommendation in it, whatever its
    objective): the cells that bracket and resolve each pick (module docstring).

    `max_k`: the largest K worth adding (None: the sweep's largest K). `max_launches`: the
    most launches a close pair may be raised to (None: the most any advised cell has).
    """
    swept = sorted(c.k for c in advice.configs.values() if c.sweep == sweep and c.k)
    top = max_k if max_k is not None else max(swept)
    launches_cap = max_launches
    if launches_cap is None:
        launches_cap = max(
            (c.interval.launches for r in advice.recommendations for c in r.candidates),
            default=1,
        )
    workloads = list(dict.fromkeys(r.workload for r in advice.recommendations))
    objectives = list(dict.fromkeys(r.objective for r in advice.recommendations))
    cells: dict[tuple[int, int, int], tuple[str, str, int]] = {}
    added: set[int] = set()
    raise_to: int | None = None
    lines: list[str] = []
    for r in advice.recommendations:
        excluded_ks = {
            advice.configs[e.server].k
            for e in advice.excluded
            if (e.workload, e.concurrency, e.objective) == (r.workload, r.concurrency, r.objective)
            and e.server in advice.configs
        }
        step = _step(r, {k for k in excluded_ks if k is not None}, top, launches_cap)
        where = (f"{r.workload} " if len(workloads) > 1 else "") + f"c={r.concurrency}"
        if len(objectives) > 1:
            where += f" ({r.objective})"
        lines.append(f"{where}: {step.line}")
        order = workloads.index(r.workload)
        for k in step.add:
            cells[(order, r.concurrency, k)] = (
                _server(k, sweep, advice.configs),
                r.workload,
                r.concurrency,
            )
            if k >= 1:
                added.add(k)
        for candidate in step.more_launches:
            cells[(order, r.concurrency, candidate.k)] = (
                candidate.server,
                r.workload,
                r.concurrency,
            )
        if step.launches is not None:
            raise_to = max(raise_to or 0, step.launches)
    if not cells:
        lines.append(NOTHING_LEFT)
    return SearchPlan(
        sweep=sweep,
        ks=tuple(sorted(set(swept) | added)),
        cells=tuple(cells[key] for key in sorted(cells)),
        launches=raise_to,
        lines=tuple(lines),
    )


def plan_file(plan: SearchPlan, suite: str, results: str) -> SearchPlanFile:
    """The plan as the file `specbench run SUITE --plan FILE` reads (`run.search_plan`)."""
    return SearchPlanFile(
        suite=suite,
        results=results,
        sweep=plan.sweep,
        k=list(plan.ks),
        launches=plan.launches,
        cells=[PlannedCell(server=s, workload=w, concurrency=c) for s, w, c in plan.cells],
    )
