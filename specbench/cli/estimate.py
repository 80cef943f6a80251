"""`specbench estimate SUITE --from DIR | --pilot`: a campaign's wall time and GPU-hours
before it runs, fitted on earlier results or on a pilot (the logic: `run/estimate.py`,
`run/pilot.py`). `run --dry-run` prints the same estimate from its own `--output`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from specbench.cli import options as o
from specbench.common.errors import CellsFailed, SpecbenchError

if TYPE_CHECKING:
    from specbench.run.pilot import PilotSettings
    from specbench.run.plan import Plan, RunOptions


#: Not `run`'s --output: nothing is written there; it places the pilot's directory.
CampaignOutput = Annotated[
    Path | None,
    typer.Option(
        "--output",
        metavar="DIR",
        help="The campaign's results directory (default results/<suite name>); the pilot's "
        "goes beside it, OUTPUT.pilot.",
        rich_help_panel=o.RESULTS,
    ),
]


def register(app: typer.Typer) -> None:
    app.command(name="estimate", cls=o.Command)(estimate)


def estimate(
    suite: o.Suite,
    set_: o.Overrides = None,
    data_dir: o.DataDir = None,
    server: o.ServerFilter = None,
    workload: o.WorkloadFilter = None,
    sources: o.EstimateFrom = None,
    pilot: o.Pilot = False,
    pilot_size: o.PilotSize = o.PILOT_SIZE,
    pilot_concurrency: o.PilotConcurrency = None,
    pilot_output: o.PilotOutput = None,
    output: CampaignOutput = None,
    force: o.Force = False,
    endpoint: o.Endpoints = None,
    accept_server_values: o.AcceptServerValues = False,
    vllm_bin: o.VllmBin = None,
    gpus_unchecked: o.GpusUnchecked = False,
    ready_timeout: o.ReadyTimeout = o.READY_TIMEOUT_S,
    max_restarts: o.MaxRestarts = o.MAX_RESTARTS,
    api_key_env: o.ApiKeyEnv = None,
) -> None:
    """Price a campaign before it runs: wall time and GPU-hours from earlier results or a pilot."""
    from specbench.run.plan import plan_suite
    from specbench.run.preflight import preflight
    from specbench.suite import load_suite

    check_pilot_options(pilot, pilot_size, pilot_concurrency, pilot_output)
    if not sources and not pilot:
        raise SpecbenchError(
            "estimate: give --from DIR (earlier results of this suite and model) or --pilot "
            "(measure a few conversations first)"
        )
    loaded = load_suite(suite, o.suite_overrides(set_, data_dir))
    options = o.run_options(
        loaded.name,
        output,
        endpoint,
        force=force,
        max_restarts=max_restarts,
        vllm_bin=vllm_bin,
        servers=tuple(server or ()),
        workloads=tuple(workload or ()),
        ready_timeout_s=ready_timeout,
        api_key_env=api_key_env,
        accept_server_values=accept_server_values,
        gpus_unchecked=gpus_unchecked,
    )
    plan = plan_suite(loaded, options)
    settings = None
    if pilot:
        settings = pilot_settings(options.output, pilot_output, pilot_size, pilot_concurrency)
        # The pilot starts servers: what `run` would refuse is refused first (and an
        # attached server's accepted values are the plan's, as its pilot records them).
        plan = preflight(plan, options, accept_server_values=accept_server_values).plan
    print_estimate(plan, options, sources or [], settings, flag="--from")


def check_pilot_options(
    pilot: bool, size: int, concurrencies: list[int] | None, output: Path | None
) -> None:
    """The pilot's settings only with the pilot; else one line."""
    if (size != o.PILOT_SIZE or concurrencies or output) and not pilot:
        raise SpecbenchError("--pilot-size, --pilot-concurrency, --pilot-output: only with --pilot")


def pilot_settings(
    output: Path, where: Path | None, size: int, concurrencies: list[int] | None
) -> PilotSettings:
    """The pilot's settings; its directory (default: beside `output`) apart from `output`."""
    from specbench.run.pilot import PilotSettings, check_output, default_output

    where = where or default_output(output)
    check_output(where, output)
    return PilotSettings(where, size, tuple(concurrencies or ()))


def own_results(plan: Plan, output: Path) -> list[Path]:
    """`[output]` when it already holds results of the plan's suite (the estimate fits them
    too); else none. Of the same suite but another model: one line naming --output."""
    from specbench.run.estimate import check_source
    from specbench.store.manifest import read_manifest

    manifest = read_manifest(output)
    if manifest is None or manifest.suite is None or plan.suite is None:
        return []
    if manifest.suite.get("name") != plan.suite.name:
        return []
    check_source(plan, output, manifest, "--output")
    return [output]


def print_estimate(
    plan: Plan, options: RunOptions, sources: list[Path], pilot: PilotSettings | None, *, flag: str
) -> None:
    """Print the cost of the cells still to measure in `--output` (all with --force): fitted
    on `sources` (given by `flag`, which their errors name) and on `--output`'s own cells of
    the same suite; where they leave cells unpriced, from a pilot if asked; else what it can."""
    from specbench.run.cells import complete_cells
    from specbench.run.estimate import describe_estimate, estimate_plan

    complete = frozenset() if options.force else complete_cells(options.output, plan.cells)
    cells = [cell for cell in plan.cells if cell not in complete]
    own = [path for path in own_results(plan, options.output) if path not in sources]
    described = "earlier results"
    if own:
        described += f" and those in {options.output}" if sources else f" in {options.output}"
    estimate = estimate_plan(plan, [*sources, *own], flag=flag, cells=cells)
    if pilot is None or (estimate is not None and not estimate.unpriced):
        typer.echo(describe_estimate(estimate, described))
        if pilot is not None:
            typer.echo(f"pilot: not run ({flag} gave an estimate)")
        return
    from specbench.cli.progress import campaign_progress
    from specbench.run.pilot import describe_pilot, run_pilot

    options.api_key()  # the pilot sends requests: an unset variable is bad input now
    with campaign_progress() as progress:
        measured = run_pilot(plan, options, pilot, progress)
    typer.echo(describe_pilot(measured))
    estimate = estimate_plan(plan, [pilot.output], flag="--pilot-output", cells=cells)
    typer.echo(describe_estimate(estimate, f"a pilot in {pilot.output}"))
    if measured.result.failed:
        raise CellsFailed(
            f"{len(measured.result.failed)} pilot cell(s) failed; see failure.json in "
            f"{pilot.output}"
        )
