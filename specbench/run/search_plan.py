"""The file of a planned K search: what `specbench advise --plan --write FILE` writes and
`specbench run SUITE --plan FILE` measures.

`{"suite": NAME, "results": DIR, "sweep": SERVER, "k": [...], "launches": N | null,
"cells": [{"server", "workload", "concurrency"}, ...]}`: the K sweep of server `sweep`
grown to the list `k` (what `--set servers.SWEEP.num_speculative_tokens=[...]` does), the
suite's `launches` raised to N where the plan asks more launches of a close pair (never
lowered), and only `cells` measured, each at every launch and repeat the suite asks. A cell
already complete on disk is skipped as in any rerun.

A plan binds one suite and one results directory: run with another suite, or into another
`--output`, it is refused in one line before anything starts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import Field, ValidationError

from specbench.common.errors import SpecbenchError
from specbench.common.model import Frozen
from specbench.common.validation import describe_validation_error
from specbench.suite.model import Suite


class PlannedCell(Frozen):
    """One point to measure: a server config, a workload, a concurrency."""

    server: str = Field(min_length=1, description="Server config, e.g. eagle3-k2.")
    workload: str = Field(min_length=1, description="Workload key (its results folder).")
    concurrency: int = Field(ge=1, description="Concurrent requests.")


class SearchPlanFile(Frozen):
    """`plan.json`: the next cells of a planned K search."""

    suite: str = Field(min_length=1, description="The suite's name the plan was made for.")
    results: str = Field(min_length=1, description="The results directory it grows (absolute).")
    sweep: str = Field(min_length=1, description="The K-swept server of the suite, e.g. eagle3.")
    k: list[int] = Field(min_length=1, description="The sweep's K list, grown (Ks of 1 or more).")
    launches: int | None = Field(
        default=None, ge=1, description="Launches to raise the suite to; None: the suite's."
    )
    cells: list[PlannedCell] = Field(description="The points to measure.")

    def points(self) -> tuple[tuple[str, str, int], ...]:
        """The cells as (server, workload, concurrency)."""
        return tuple((c.server, c.workload, c.concurrency) for c in self.cells)


def read_plan(path: Path) -> SearchPlanFile:
    """The plan at `path`, validated; anything else is one line naming the file."""
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise SpecbenchError(f"--plan {path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SpecbenchError(f"--plan {path}: not a plan file (JSON): {error}") from None
    try:
        plan = SearchPlanFile.model_validate(raw)
    except ValidationError as error:
        raise SpecbenchError(describe_validation_error(error, SearchPlanFile, "", path)) from None
    if any(k < 1 for k in plan.k):
        raise SpecbenchError(f"{path}: k: Ks are integers of 1 or more, got {plan.k}")
    return plan


def write_plan(path: Path, plan: SearchPlanFile) -> None:
    """Write `plan` as indented JSON (its folder created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan.model_dump(mode="json"), indent=2) + "\n")


def sweep_override(plan: SearchPlanFile) -> str:
    """The `--set` that grows the sweep to the plan's K list."""
    return f"servers.{plan.sweep}.num_speculative_tokens=[{', '.join(map(str, plan.k))}]"


def load_planned_suite(
    source: Path, overrides: Iterable[str], plan: SearchPlanFile, plan_path: Path
) -> Suite:
    """The suite at `source` with `overrides`, its sweep grown to the plan's Ks and its
    launches raised to the plan's; refused in one line when it is another suite's plan."""
    from specbench.suite import load_suite

    given = [*overrides, sweep_override(plan)]
    suite = load_suite(source, given)
    if suite.name != plan.suite:
        raise SpecbenchError(
            f"--plan {plan_path}: a plan of suite {plan.suite!r}, not of {suite.name!r} "
            f"({source}); plan this suite's results with specbench advise --plan"
        )
    if plan.launches is not None and plan.launches > suite.launches:
        suite = load_suite(source, [*given, f"launches={plan.launches}"])
    return suite


def planned_output(plan: SearchPlanFile, output: Path | None, plan_path: Path) -> Path:
    """Where a plan is measured: the results directory it was made from; `--output`
    naming another is refused in one line."""
    results = Path(plan.results)
    if output is not None and output.resolve() != results.resolve():
        raise SpecbenchError(
            f"--plan {plan_path}: a plan of the results in {results}, not of --output "
            f"{output}; a plan grows the directory it was made from"
        )
    return results


def planned_run(
    plan_path: Path, source: Path, overrides: Iterable[str], output: Path | None
) -> tuple[Suite, Path, tuple[tuple[str, str, int], ...]]:
    """What `run SUITE --plan FILE` measures: the grown suite, the results directory and
    the points to select (`RunOptions.points`)."""
    plan = read_plan(plan_path)
    suite = load_planned_suite(source, overrides, plan, plan_path)
    return suite, planned_output(plan, output, plan_path), plan.points()
