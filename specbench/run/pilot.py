"""The pilot: a few conversations per workload and concurrency, to price a campaign.

`specbench estimate SUITE --pilot` (formerly `run --dry-run --pilot`, still accepted) has
no earlier results to fit, so it measures some: a plan derived from the campaign's
(`pilot_plan`) runs through the one orchestrator into a results directory of its own, and
the same estimate (`run/estimate.py`) then reads that directory as it reads any earlier
results. The derived plan keeps the campaign's servers (started, their startup time
recorded, as `run` does) and workloads (same selection, same keys, same warmup), and
changes only what it measures:

- per server × workload, one cell at each pilot concurrency (every level of the workload
  unless chosen: the rate is not linear in log c, and interpolating it between the lowest
  and highest level priced the emulator card-shape suite 30% high, all levels 9%),
  repeat 0, one launch (the estimate prices every launch's start), no precision target;
- each cell measures the first N conversations of the stratified order (round-robin over
  categories, `measure/precision.stratified_order`), N = min(conversations,
  max(cap, 2c), max(size × c, floor, categories)): `size` conversations per slot, so the
  steady-state rate (n − c + 1 ends) and the drain tail (the last c) can both be fitted;
  at least `floor` (32) and every category once, so a low-concurrency rate does not rest
  on a handful of conversations; at most `cap` (never below two per slot).

The pilot's suite is the campaign's with those changes and a description saying so: its
hash differs from the campaign's, so a `run` into the pilot's directory is refused and a
pilot is never resumed as campaign cells. A complete pilot in the directory is reused.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from specbench.common.defaults import (
    PILOT_MAX_CONVERSATIONS,
    PILOT_MIN_CONVERSATIONS,
    PILOT_SIZE,
)
from specbench.common.errors import SpecbenchError
from specbench.run.orchestrator import RunProgress, RunResult, run_plan
from specbench.run.plan import Plan, RunOptions, suite_hash
from specbench.run.preflight import load_plan_workload
from specbench.store.manifest import read_manifest
from specbench.suite.model import Cell, Suite, WorkloadSpec


@dataclass(frozen=True)
class PilotSettings:
    """How big the pilot is and where it goes."""

    output: Path
    #: Conversations per concurrency slot in each pilot cell.
    size: int = PILOT_SIZE
    #: Pilot concurrencies for every workload; empty: each of the workload's.
    concurrencies: tuple[int, ...] = ()
    max_conversations: int = PILOT_MAX_CONVERSATIONS
    min_conversations: int = PILOT_MIN_CONVERSATIONS


@dataclass(frozen=True)
class WorkloadFacts:
    """What the pilot's sizes depend on: the workload's conversations and categories."""

    conversations: int
    categories: int


@dataclass(frozen=True)
class PilotRun:
    """A pilot that ran (or was reused): its plan, outcomes and wall time."""

    plan: Plan
    result: RunResult
    output: Path
    wall_s: float

    @property
    def reused(self) -> bool:
        return not self.result.measured and not self.result.failed


def default_output(output: Path) -> Path:
    """The pilot's directory beside the campaign's: `results/<suite>.pilot`.

    Not inside it: readers of a results directory take every summary.json below it.
    """
    return output.with_name(output.name + ".pilot")


def check_output(pilot: Path, output: Path) -> None:
    """The pilot's directory and the campaign's are apart; else one line."""
    a, b = pilot.resolve(), output.resolve()
    if a == b or a.is_relative_to(b) or b.is_relative_to(a):
        raise SpecbenchError(
            f"--pilot-output {pilot}: must lie outside the results directory {output} "
            "(and not hold it), so pilot cells are never read as the campaign's"
        )


def pilot_concurrencies(workload: WorkloadSpec, chosen: Sequence[int] = ()) -> list[int]:
    """The concurrencies a workload's pilot measures: `chosen`, else every level of it."""
    levels = set(chosen) if chosen else set(workload.concurrency)
    return sorted(levels)


def pilot_conversations(
    concurrency: int,
    facts: WorkloadFacts,
    size: int,
    cap: int = PILOT_MAX_CONVERSATIONS,
    floor: int = PILOT_MIN_CONVERSATIONS,
) -> int:
    """N = min(conversations, max(cap, 2c), max(size × c, floor, categories)) (see above)."""
    if size < 1:
        raise SpecbenchError(f"--pilot-size: allowed: at least 1, got {size}")
    wanted = max(size * concurrency, floor, facts.categories)
    return min(facts.conversations, max(cap, 2 * concurrency), wanted)


def pilot_suite(suite: Suite, keys: Sequence[str], settings: PilotSettings) -> Suite:
    """The campaign's suite as the pilot measures it (same name, servers and selections)."""
    workloads = [
        workload.without_stopping().model_copy(
            update={
                "name": key,  # the campaign's key, so the estimate matches the cells
                "concurrency": pilot_concurrencies(workload, settings.concurrencies),
                "repeats": 1,
                "launches": None,
            }
        )
        for workload, key in zip(suite.workloads, keys, strict=True)
    ]
    levels = (
        "c " + ", ".join(map(str, sorted(set(settings.concurrencies))))
        if settings.concurrencies
        else "each workload's concurrencies"
    )
    description = (
        f"PILOT of suite {suite.name!r} (specbench run --dry-run --pilot), not campaign "
        f"cells: {levels}, {settings.size} conversations per slot (at least "
        f"{settings.min_conversations} and one per category, at most "
        f"{settings.max_conversations}), first of the stratified order"
    )
    return suite.model_copy(
        update={"workloads": workloads, "repeats": 1, "launches": 1, "description": description}
    )


def pilot_plan(plan: Plan, settings: PilotSettings, facts: Mapping[str, WorkloadFacts]) -> Plan:
    """The pilot of `plan`: per server × workload of its cells, one cell per pilot level."""
    if plan.suite is None:
        raise SpecbenchError("--pilot: needs a suite (run SUITE)")
    suite = pilot_suite(plan.suite, plan.keys, settings)
    cells: list[Cell] = []
    seen: set[tuple[str, int]] = set()
    for cell in plan.cells:
        if (cell.server, cell.workload_index) in seen:
            continue
        seen.add((cell.server, cell.workload_index))
        for concurrency in suite.workloads[cell.workload_index].concurrency:
            cells.append(
                Cell(
                    server=cell.server,
                    workload_index=cell.workload_index,
                    workload=cell.workload,
                    dataset=cell.dataset,
                    concurrency=concurrency,
                    repeat=0,
                    max_model_len=cell.max_model_len,
                    conversations=pilot_conversations(
                        concurrency,
                        facts[cell.workload],
                        settings.size,
                        settings.max_conversations,
                        settings.min_conversations,
                    ),
                )
            )
    return Plan("pilot", plan.servers, tuple(suite.workloads), plan.keys, tuple(cells), suite)


def workload_facts(plan: Plan) -> dict[str, WorkloadFacts]:
    """Each workload of the plan's cells, loaded: its conversations and categories."""
    facts = {}
    for index in sorted({cell.workload_index for cell in plan.cells}):
        loaded = load_plan_workload(plan.workloads[index], plan.keys[index])
        facts[plan.keys[index]] = WorkloadFacts(
            conversations=len(loaded.conversations),
            categories=len({c.category for c in loaded.conversations}),
        )
    return facts


def run_pilot(
    plan: Plan, options: RunOptions, settings: PilotSettings, progress: RunProgress
) -> PilotRun:
    """Derive the pilot of `plan` and measure it into `settings.output` (blocking)."""
    derived = pilot_plan(plan, settings, workload_facts(plan))
    assert derived.suite is not None
    existing = read_manifest(settings.output)
    if existing is not None and existing.suite_hash not in (None, suite_hash(derived.suite)):
        raise SpecbenchError(
            f"--pilot-output {settings.output}: holds results of another suite or pilot "
            "shape; give another --pilot-output or remove that directory"
        )
    pilot_options = options.model_copy(update={"output": settings.output, "log_dir": None})
    started = time.perf_counter()
    result = run_plan(derived, pilot_options, progress)
    return PilotRun(derived, result, settings.output, time.perf_counter() - started)


def describe_pilot(pilot: PilotRun) -> str:
    """One line: what the pilot measured, what it cost, where its raw data lies."""
    manifest = read_manifest(pilot.output)
    cells = pilot.plan.cells
    sizes = sorted({cell.conversations or 0 for cell in cells})
    shape = (
        f"{len(cells)} cells, {sizes[0]}–{sizes[-1]} conversations each"
        if len(sizes) > 1
        else f"{len(cells)} cells, {sizes[0]} conversations each"
    )
    if pilot.reused:
        return f"pilot: reused {shape} from {pilot.output} (--force measures them again)"
    cost = manifest.runs[-1].cost if manifest is not None and manifest.runs else None
    spent = f", {cost.gpu_hours:.4f} GPU-h" if cost is not None else ""
    failed = f", {len(pilot.result.failed)} failed" if pilot.result.failed else ""
    return (
        f"pilot: {shape}{failed}, measured in {pilot.wall_s:.1f} s wall{spent}; "
        f"raw data in {pilot.output}"
    )
