"""`specbench advise RESULTS_DIR…`: which K to ship at each concurrency, from a K sweep's
saved results (offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from specbench.cli import options as o

#: The --help panel of the planned search's options.
PLANNING = "Planned search"


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
    max_launch_spread: Annotated[
        float,
        typer.Option(
            min=0.0,
            metavar="FRACTION",
            help="Exclude a cell whose launch values spread more than this, (max − min) / "
            "median; raise it on a platform whose launches are noisier (a CPU).",
        ),
    ] = 0.10,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print advice.json (the report's report/advice.json) instead; with --plan, "
            "the plan file.",
        ),
    ] = False,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Print the next cells worth measuring instead (one results directory): each "
            "pick's unmeasured neighbours K - 1 and K + 1, until every pick is bracketed and "
            "resolved. Objective: throughput unless --objective.",
            rich_help_panel=PLANNING,
        ),
    ] = False,
    write: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="With --plan: write the plan file for specbench run SUITE --plan FILE.",
            show_default=False,
            rich_help_panel=PLANNING,
        ),
    ] = None,
    max_k: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="With --plan: the largest K to add. Default: the sweep's largest K.",
            show_default=False,
            rich_help_panel=PLANNING,
        ),
    ] = None,
    max_launches: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="With --plan: raise a pick and a neighbour whose intervals overlap (1% or "
            "more apart) to this many launches. Default: the most any cell has (none added).",
            show_default=False,
            rich_help_panel=PLANNING,
        ),
    ] = None,
) -> None:
    """The best K per concurrency and objective with its interval and gains, per-position
    acceptance by K, a `num_speculative_tokens_per_batch_size` schedule to paste, the Pareto
    frontier of throughput against interactivity, and (with an SLO) each config's capacity;
    with --plan, the cells to measure next instead of the whole grid."""
    import json

    from specbench.advise.advice import DEFAULT_OBJECTIVE, OBJECTIVES, advice_json, build_advice
    from specbench.advise.inputs import load_inputs
    from specbench.advise.tables import advice_tables
    from specbench.cli.console import make_console
    from specbench.common.errors import SpecbenchError
    from specbench.render.markdown import to_rich

    if not plan and (write is not None or max_k is not None or max_launches is not None):
        flag = "--write" if write else "--max-k" if max_k is not None else "--max-launches"
        raise SpecbenchError(f"{flag}: only with --plan")
    if plan and len(results_dirs) > 1:
        raise SpecbenchError(
            f"--plan: give one results directory (the plan grows it), got {len(results_dirs)}"
        )
    chosen = tuple(objective or ((DEFAULT_OBJECTIVE,) if plan else OBJECTIVES))
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
    advice = build_advice(inputs.frame, inputs.configs, chosen, workload, bounds, max_launch_spread)
    if plan:
        from specbench.cli.advise_plan import print_plan

        print_plan(advice, inputs, results_dirs[0], write, max_k, max_launches, as_json=as_json)
        return
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
