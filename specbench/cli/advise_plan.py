"""`specbench advise --plan`: print (or write) the next cells of a planned K search, and the
command that measures them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from specbench.common.errors import SpecbenchError

if TYPE_CHECKING:
    from specbench.advise.advice import Advice
    from specbench.advise.inputs import AdviceInputs


def suite_argument(results: Path) -> str:
    """The suite file the last `specbench run` into `results` was given (its argv), or
    `SUITE.toml` where no run recorded one."""
    from specbench.store.manifest import read_manifest

    manifest = read_manifest(results)
    for run in reversed(manifest.runs if manifest else []):
        argv = run.argv
        if "run" in argv[:-1] and argv[argv.index("run") + 1].endswith(".toml"):
            return argv[argv.index("run") + 1]
    return "SUITE.toml"


def print_plan(
    advice: Advice,
    inputs: AdviceInputs,
    results: Path,
    write: Path | None,
    max_k: int | None,
    max_launches: int | None,
    *,
    as_json: bool,
) -> None:
    """One line per point, then the grown K list and the `run --plan` command (or the plan
    file as JSON); the plan file written to `write` when given and not done."""
    from specbench.advise.plan import plan_file, plan_search, sweep_of
    from specbench.run.search_plan import write_plan

    try:
        sweep = sweep_of(inputs.configs)
    except ValueError as error:
        raise SpecbenchError(f"{results}: {error}") from None
    plan = plan_search(advice, sweep, max_k=max_k, max_launches=max_launches)
    document = plan_file(plan, inputs.suite, str(results.resolve()))
    if write is not None and not plan.done:
        write_plan(write, document)
    if as_json:
        typer.echo(json.dumps(document.model_dump(mode="json"), indent=2))
        return
    for line in plan.lines:
        typer.echo(line)
    if plan.done:
        return
    more = f", launches raised to {plan.launches}" if plan.launches else ""
    typer.echo(
        f"{len(plan.cells)} point{'s' if len(plan.cells) != 1 else ''} to measure; {sweep}'s "
        "K list grows to "
        f"[{', '.join(map(str, plan.ks))}]{more}"
    )
    command = [
        "specbench",
        "run",
        suite_argument(results),
        "--output",
        str(results),
        "--plan",
        str(write or "plan.json"),
    ]
    written = "" if write else " (after --write plan.json)"
    typer.echo(f"measure them: {shlex.join(command)}{written}")
