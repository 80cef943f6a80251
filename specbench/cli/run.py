"""`specbench run SUITE`: run a whole campaign (or print it with --dry-run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from specbench.cli import options as o
from specbench.common.errors import CellsFailed, ServersNotStarted, SpecbenchError

if TYPE_CHECKING:
    from specbench.run.pilot import PilotSettings
    from specbench.run.plan import Plan, RunOptions


def register(app: typer.Typer) -> None:
    app.command(name="run")(run)


def run(
    suite: Annotated[Path, typer.Argument(help="Suite TOML file.")],
    output: Annotated[
        Path | None, typer.Option(help="Results directory; default results/<suite name>.")
    ] = None,
    set_: o.Overrides = None,
    data_dir: o.DataDir = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            help="Check everything (preflight) and print the selected cells and each "
            "server's exact command; start nothing."
        ),
    ] = False,
    accept_server_values: Annotated[
        bool,
        typer.Option(
            help="An attached server that is not its suite entry (model, speculation, K): "
            "measure it and record its values instead of refusing."
        ),
    ] = False,
    endpoint: Annotated[
        list[str] | None,
        typer.Option(help="NAME=URL: attach to a running server instead of starting one."),
    ] = None,
    server: Annotated[
        list[str] | None, typer.Option(help="Run only this server config (repeatable).")
    ] = None,
    workload: Annotated[
        list[str] | None, typer.Option(help="Run only this workload key (repeatable).")
    ] = None,
    estimate_from: o.EstimateFrom = None,
    pilot: o.Pilot = False,
    pilot_size: o.PilotSize = o.PILOT_SIZE,
    pilot_concurrency: o.PilotConcurrency = None,
    pilot_output: o.PilotOutput = None,
    force: o.Force = False,
    fail_fast: Annotated[bool, typer.Option(help="Stop at the first failed cell.")] = False,
    max_restarts: o.MaxRestarts = o.MAX_RESTARTS,
    vllm_bin: o.VllmBin = None,
    ready_timeout: o.ReadyTimeout = o.READY_TIMEOUT_S,
    api_key_env: o.ApiKeyEnv = None,
    executor: o.Executor = "local",
    shard_by: o.ShardByOption = "server",
    shard: o.ShardOption = None,
    detach: o.Detach = False,
    retries: o.Retries = 0,
    poll_interval: o.PollInterval = 5.0,
    partition: o.Partition = None,
    account: o.Account = None,
    time_limit: o.TimeLimit = None,
    nodes: o.Nodes = None,
    gpus_per_node: o.GpusPerNode = None,
    gres: o.Gres = None,
    constraint: o.Constraint = None,
    sbatch_option: o.SbatchOption = None,
    setup: o.Setup = None,
    launcher: o.Launcher = None,
) -> None:
    """Start each server once, measure every missing cell, and print AL, tok/s/GPU and speedup."""
    from specbench.run.plan import RunOptions, parse_endpoints, plan_suite
    from specbench.suite import load_suite

    overrides = [
        *(set_ or ()),
        *([f"data_dir = {json.dumps(str(data_dir.resolve()))}"] if data_dir else []),
    ]
    loaded = load_suite(suite, overrides)
    piloting = pilot_size != o.PILOT_SIZE or pilot_concurrency or pilot_output
    if piloting and not pilot:
        raise SpecbenchError("--pilot-size, --pilot-concurrency, --pilot-output: only with --pilot")
    if (estimate_from or pilot) and not (dry_run and executor == "local"):
        name = "--estimate-from" if estimate_from else "--pilot"
        raise SpecbenchError(f"{name}: only with --dry-run (and --executor local)")
    options = RunOptions(
        output=output or Path("results") / loaded.name,
        endpoints=parse_endpoints(endpoint or []),
        force=force,
        fail_fast=fail_fast,
        max_restarts=max_restarts,
        vllm_bin=vllm_bin,
        servers=tuple(server or ()),
        workloads=tuple(workload or ()),
        ready_timeout_s=ready_timeout,
        api_key_env=api_key_env,
        accept_server_values=accept_server_values,
    )
    # The [slurm] settings the command line overrides (None or [] keeps the suite's).
    slurm_settings = {
        "partition": partition,
        "account": account,
        "time_limit": time_limit,
        "nodes": nodes,
        "gpus_per_node": gpus_per_node,
        "gres": gres,
        "constraint": constraint,
        "sbatch_options": sbatch_option,
        "setup": setup,
        "launcher": launcher,
    }
    if dry_run and executor == "local":
        pilot_asked = (pilot_output, pilot_size, tuple(pilot_concurrency or ())) if pilot else None
        _dry_run(plan_suite(loaded, options), options, estimate_from or [], pilot_asked)
        return
    options.api_key()  # an unset variable is bad input before anything starts
    if executor == "slurm":
        from specbench.cli.slurm import run_slurm, settings_with
        from specbench.slurm.executor import SlurmRun

        if endpoint:
            raise SpecbenchError("--endpoint: not with --executor slurm (each job starts servers)")
        slurm_run = SlurmRun(
            options=options,
            settings=settings_with(loaded.slurm, **slurm_settings),
            shard_by=shard_by,
            shard_patterns=tuple(shard or ()),
            retries=retries,
            detach=detach,
            poll_interval_s=poll_interval,
        )
        run_slurm(loaded, slurm_run, dry_run=dry_run)
        return
    if detach or retries or shard or any(slurm_settings.values()):
        raise SpecbenchError(f"options of the {o.PANEL} need --executor slurm")
    _run_local(plan_suite(loaded, options), options)


def _dry_run(
    plan: Plan,
    options: RunOptions,
    estimate_from: list[Path],
    pilot: tuple[Path | None, int, tuple[int, ...]] | None,
) -> None:
    """Preflight and resume checks, the selected cells and commands, then the cost (from
    `estimate_from`, else from the pilot asked for: its output, size and concurrencies)."""
    from specbench.run.dry_run import check_dry_run, describe_dry_run

    checked = check_dry_run(plan, options, accept_server_values=options.accept_server_values)
    typer.echo(describe_dry_run(checked, options.output, force=options.force))
    settings: PilotSettings | None = None
    if pilot is not None:
        from specbench.run.pilot import PilotSettings, check_output, default_output

        where, size, concurrencies = pilot
        where = where or default_output(options.output)
        check_output(where, options.output)
        settings = PilotSettings(where, size, concurrencies)
    dry_run_estimate(checked.plan, options, estimate_from, settings)


def _run_local(plan: Plan, options: RunOptions) -> None:
    """Measure the plan here; print its table, acceptance checks and tally; exit 3 or 1 on
    servers that would not start or failed cells."""
    from specbench.analysis.al_consistency import check_acceptance, describe_checks
    from specbench.cli.progress import campaign_progress, results_console, run_table
    from specbench.run.orchestrator import run_plan

    with campaign_progress() as progress:
        result = run_plan(plan, options, progress)
    results_console.print(run_table(plan, result))
    for line in describe_checks(check_acceptance(options.output)):
        results_console.print(line)
    skipped = len(result.outcomes) - len(result.measured) - len(result.failed)
    results_console.print(
        f"{len(result.measured)} cells measured, {skipped} already complete, "
        f"{len(result.failed)} failed; results in {options.output}",
        markup=False,
    )
    if result.not_started:
        raise ServersNotStarted(
            "; ".join(
                f"server {name!r} would not start"
                + (f" ({len(server.not_run)} more of its cells not run)" if server.not_run else "")
                + f": {server.message}"
                for name, server in result.not_started.items()
            )
        )
    if result.failed:
        raise CellsFailed(
            f"{len(result.failed)} cell(s) failed; see failure.json in {options.output}"
        )


def dry_run_estimate(
    plan: Plan, options: RunOptions, sources: list[Path], pilot: PilotSettings | None
) -> None:
    """Print the cost: from `sources` if they give an estimate, else from a pilot, else none."""
    from specbench.run.estimate import describe_estimate, estimate_plan

    estimate = estimate_plan(plan, sources)
    if estimate is not None or pilot is None:
        typer.echo(describe_estimate(estimate))
        if pilot is not None:
            typer.echo("pilot: not run (--estimate-from gave an estimate)")
        return
    from specbench.cli.progress import campaign_progress
    from specbench.run.pilot import describe_pilot, run_pilot

    options.api_key()  # the pilot sends requests: an unset variable is bad input now
    with campaign_progress() as progress:
        measured = run_pilot(plan, options, pilot, progress)
    typer.echo(describe_pilot(measured))
    estimate = estimate_plan(plan, [pilot.output])
    typer.echo(describe_estimate(estimate, f"a pilot in {pilot.output}"))
    if measured.result.failed:
        raise CellsFailed(
            f"{len(measured.result.failed)} pilot cell(s) failed; see failure.json in "
            f"{pilot.output}"
        )
