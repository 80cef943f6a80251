"""`specbench advise RESULTS_DIR…`: which K to ship at each concurrency, from a K sweep's
saved results (offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from specbench.cli import options as o


def register(app: typer.Typer) -> None:
    app.command(name="advise")(advise)


def advise(
    results_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Results directories of one suite with a K sweep and its baseline.",
            show_default=False,
            metavar="RESULTS_DIR",
        ),
    ],
    objective: Annotated[
        list[str] | None,
        typer.Option(
            help="What to maximise (repeatable): throughput (output tok/s/GPU), interactivity "
            "(tok/s/user), e2e_p90 (p90 E2E latency, lowest). Default: all three.",
            show_default=False,
        ),
    ] = None,
    workload: Annotated[
        str | None,
        typer.Option(
            help="The workload whose throughput picks make the schedule; default the first."
        ),
    ] = None,
    slo: o.SloBounds = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print advice.json (the report's report/advice.json) instead."),
    ] = False,
) -> None:
    """The best K per concurrency and objective with its interval and gains, per-position
    acceptance by K, a `num_speculative_tokens_per_batch_size` schedule to paste, the Pareto
    frontier of throughput against interactivity, and (with an SLO) each config's capacity."""
    import json

    from specbench.advise.advice import OBJECTIVES, advice_json, build_advice
    from specbench.advise.inputs import load_inputs
    from specbench.advise.tables import advice_tables
    from specbench.cli.console import make_console
    from specbench.common.errors import SpecbenchError
    from specbench.render.markdown import to_rich

    chosen = tuple(objective or OBJECTIVES)
    unknown = [o for o in chosen if o not in OBJECTIVES]
    if unknown:
        raise SpecbenchError(f"--objective {unknown[0]!r}: allowed: {', '.join(OBJECTIVES)}")
    inputs = load_inputs(results_dirs)
    workloads = set(inputs.frame["workload"])
    if workload is not None and workload not in workloads:
        raise SpecbenchError(
            f"--workload {workload!r}: not in these results; "
            f"allowed: {', '.join(sorted(workloads))}"
        )
    from specbench.advise.slo import recorded_slo

    bounds = o.slo_of(slo) or recorded_slo(results_dirs)
    advice = build_advice(inputs.frame, inputs.configs, chosen, workload, bounds)
    if as_json:
        typer.echo(json.dumps(advice_json(advice), indent=2))
        return
    console = make_console()
    for table in advice_tables(advice, frontier=True):
        console.print(to_rich(table))
    if advice.schedule is None:
        console.print(f"no schedule: {advice.schedule_note}", markup=False, soft_wrap=True)
    else:  # one unwrapped line, to paste into `vllm serve`
        config = json.dumps(advice.schedule.speculative_config, separators=(",", ":"))
        console.print(f"--speculative-config '{config}'", markup=False, soft_wrap=True)
