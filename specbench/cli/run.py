"""`specbench run SUITE`: run a whole campaign (or print it with --dry-run)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from specbench.cli import deprecated as moved
from specbench.cli import options as o
from specbench.cli.estimate import check_pilot_options, pilot_settings, print_estimate
from specbench.common.errors import CellsFailed, ServersNotStarted, SpecbenchError

if TYPE_CHECKING:
    from specbench.run.pilot import PilotSettings
    from specbench.run.plan import Plan, RunOptions


def register(app: typer.Typer) -> None:
    app.command(name="run", cls=o.Command)(run)


def run(
    ctx: typer.Context,
    suite: o.Suite,
    set_: o.Overrides = None,
    data_dir: o.DataDir = None,
    server: o.ServerFilter = None,
    workload: o.WorkloadFilter = None,
    plan: o.PlanFile = None,
    dry_run: o.DryRun = False,
    output: o.Output = None,
    force: o.Force = False,
    endpoint: o.Endpoints = None,
    accept_server_values: o.AcceptServerValues = False,
    vllm_bin: o.VllmBin = None,
    gpus_unchecked: o.GpusUnchecked = False,
    ready_timeout: o.ReadyTimeout = o.READY_TIMEOUT_S,
    max_restarts: o.MaxRestarts = o.MAX_RESTARTS,
    api_key_env: o.ApiKeyEnv = None,
    fail_fast: o.FailFast = False,
    executor: o.Executor = "local",
    shard_by: o.ShardByOption = "server",
    shard: o.ShardOption = None,
    detach: o.Detach = False,
    retries: o.Retries = 0,
    poll_interval: o.PollInterval = 5.0,
    # Moved, hidden, each announced (cli/deprecated.py); the [slurm] ones are read from
    # ctx.params by deprecated.slurm_overrides.
    estimate_from: moved.EstimateFrom = None,
    pilot: moved.Pilot = False,
    pilot_size: moved.PilotSize = o.PILOT_SIZE,
    pilot_concurrency: moved.PilotConcurrency = None,
    pilot_output: moved.PilotOutput = None,
    partition: moved.Partition = None,
    account: moved.Account = None,
    time_limit: moved.TimeLimit = None,
    nodes: moved.Nodes = None,
    gpus_per_node: moved.GpusPerNode = None,
    gres: moved.Gres = None,
    constraint: moved.Constraint = None,
    sbatch_option: moved.SbatchOption = None,
    setup: moved.Setup = None,
    launcher: moved.Launcher = None,
) -> None:
    """Start each server once, measure every missing cell, and print AL, tok/s/GPU and speedup."""
    from specbench.run.plan import plan_suite
    from specbench.suite import load_suite

    with moved.announced(moved.notes(ctx, suite)):
        overrides = o.suite_overrides(set_, data_dir)
        points: tuple[tuple[str, str, int], ...] = ()
        if plan is None:
            loaded = load_suite(suite, overrides)
        else:
            from specbench.run.search_plan import planned_run

            loaded, output, points = planned_run(plan, suite, overrides, output)
        if loaded.slo:  # a bad bound is found now, not by the report after the campaign
            from specbench.advise.slo import slo_from_table

            slo_from_table(loaded.slo, f"{suite}: slo")
        check_pilot_options(pilot, pilot_size, pilot_concurrency, pilot_output)
        if (estimate_from or pilot) and not (dry_run and executor == "local"):
            name = "--estimate-from" if estimate_from else "--pilot"
            raise SpecbenchError(f"{name}: only with --dry-run (and --executor local)")
        options = o.run_options(
            loaded.name,
            output,
            endpoint,
            force=force,
            fail_fast=fail_fast,
            max_restarts=max_restarts,
            vllm_bin=vllm_bin,
            servers=tuple(server or ()),
            workloads=tuple(workload or ()),
            points=points,
            ready_timeout_s=ready_timeout,
            api_key_env=api_key_env,
            accept_server_values=accept_server_values,
            gpus_unchecked=gpus_unchecked,
        )
        slurm_settings = moved.slurm_overrides(ctx)
        if dry_run and executor == "local":
            settings = None
            if pilot:
                settings = pilot_settings(
                    options.output, pilot_output, pilot_size, pilot_concurrency
                )
            _dry_run(plan_suite(loaded, options), options, estimate_from or [], settings)
            return
        options.api_key()  # an unset variable is bad input before anything starts
        if executor == "slurm":
            from specbench.cli.slurm import run_slurm, settings_with
            from specbench.slurm.executor import SlurmRun

            if endpoint:
                raise SpecbenchError(
                    "--endpoint: not with --executor slurm (each job starts servers)"
                )
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
            raise SpecbenchError(f"options of the {o.SLURM} need --executor slurm")
        _run_local(plan_suite(loaded, options), options)


def _dry_run(
    plan: Plan, options: RunOptions, estimate_from: list[Path], pilot: PilotSettings | None
) -> None:
    """Preflight and resume checks, the selected cells and commands, then the cost of the
    cells still to measure: from `estimate_from` and what `--output` holds of the suite (then
    the pilot asked for, for cells they leave unpriced)."""
    from specbench.run.dry_run import check_dry_run, describe_dry_run

    checked = check_dry_run(plan, options, accept_server_values=options.accept_server_values)
    typer.echo(describe_dry_run(checked, options.output, force=options.force))
    print_estimate(checked.plan, options, estimate_from, pilot, flag="--estimate-from")


def _run_local(plan: Plan, options: RunOptions) -> None:
    """Measure the plan here; print its table, acceptance checks and tally; exit 3 or 1 on
    servers that would not start or failed cells."""
    from specbench.analysis.al_consistency import check_acceptance, describe_checks
    from specbench.cli.progress import campaign_progress, results_console, run_table
    from specbench.run.launch_rounds import describe as describe_precision
    from specbench.run.orchestrator import run_plan

    with campaign_progress() as progress:
        result = run_plan(plan, options, progress)
    results_console.print(run_table(plan, result, results_console.width))
    for line in describe_checks(check_acceptance(options.output)):
        results_console.print(line)
    skipped = len(result.outcomes) - len(result.measured) - len(result.failed)
    results_console.print(
        f"{len(result.measured)} cells measured, {skipped} already complete, "
        f"{len(result.failed)} failed; results in {options.output}",
        markup=False,
    )
    precision = describe_precision(result.precision)
    if precision is not None:  # last: whether the precision was reached, or the cap
        results_console.print(precision, markup=False)
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
