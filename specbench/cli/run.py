"""`specbench run SUITE`: run a whole campaign (or print it with --dry-run)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from specbench.cli import slurm_options as so
from specbench.common.errors import CellsFailed, SpecbenchError


def register(app: typer.Typer) -> None:
    app.command(name="run")(run)


def parse_endpoints(values: list[str]) -> dict[str, str]:
    """`NAME=URL` pairs; a malformed one is a one-line error naming --endpoint."""
    endpoints: dict[str, str] = {}
    for value in values:
        name, sep, url = value.partition("=")
        if not sep or not name or not url.startswith(("http://", "https://")):
            raise SpecbenchError(f"--endpoint expects NAME=http://host:port, got {value!r}")
        endpoints[name] = url
    return endpoints


def run(
    suite: Annotated[Path, typer.Argument(help="Suite TOML file.")],
    output: Annotated[
        Path | None, typer.Option(help="Results directory; default results/<suite name>.")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="Override a suite value: servers.eagle3.num_speculative_tokens=4."
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option(help="Print the cells and server commands only.")
    ] = False,
    endpoint: Annotated[
        list[str] | None,
        typer.Option(help="NAME=URL: attach to a running server instead of starting one."),
    ] = None,
    server: Annotated[
        list[str] | None, typer.Option(help="Run only this server config (repeatable).")
    ] = None,
    force: Annotated[bool, typer.Option(help="Measure complete cells again.")] = False,
    fail_fast: Annotated[bool, typer.Option(help="Stop at the first failed cell.")] = False,
    max_restarts: Annotated[
        int, typer.Option(help="Restarts of a dead server before giving up.")
    ] = 2,
    vllm_bin: Annotated[
        str | None, typer.Option(help="vllm executable (else $SPECBENCH_VLLM, PATH).")
    ] = None,
    ready_timeout: Annotated[
        float, typer.Option(help="Seconds to wait for a server to be ready.")
    ] = 1800.0,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key.")
    ] = None,
    executor: so.Executor = "local",
    shard_by: so.ShardByOption = "server",
    shard: so.ShardOption = None,
    detach: so.Detach = False,
    retries: so.Retries = 0,
    poll_interval: so.PollInterval = 5.0,
    partition: so.Partition = None,
    account: so.Account = None,
    time_limit: so.TimeLimit = None,
    nodes: so.Nodes = None,
    gpus_per_node: so.GpusPerNode = None,
    gres: so.Gres = None,
    constraint: so.Constraint = None,
    sbatch_option: so.SbatchOption = None,
    setup: so.Setup = None,
    launcher: so.Launcher = None,
) -> None:
    """Start each server once, measure every missing cell, and print AL, tok/s/GPU and speedup."""
    from specbench.cli.progress import RichCampaignProgress, campaign_table, console
    from specbench.run.campaign import CampaignOptions, run_campaign
    from specbench.suite import describe_suite, load_suite

    loaded = load_suite(suite, set_ or ())
    if dry_run and executor == "local":
        typer.echo(describe_suite(loaded))
        return
    api_key = os.environ.get(api_key_env) if api_key_env else None
    if api_key_env and not api_key:
        raise SpecbenchError(f"--api-key-env: environment variable {api_key_env} is not set")
    if executor == "slurm":
        from specbench.cli.slurm import run_slurm, settings_with
        from specbench.slurm.executor import SlurmRun

        if endpoint:
            raise SpecbenchError("--endpoint: not with --executor slurm (each job starts servers)")
        settings = settings_with(
            loaded.slurm,
            partition=partition,
            account=account,
            time_limit=time_limit,
            nodes=nodes,
            gpus_per_node=gpus_per_node,
            gres=gres,
            constraint=constraint,
            sbatch_options=sbatch_option,
            setup=setup,
            launcher=launcher,
        )
        run_slurm(
            loaded,
            SlurmRun(
                output=output or Path("results") / loaded.name,
                settings=settings,
                shard_by=shard_by,
                servers=tuple(server or ()),
                shard_patterns=tuple(shard or ()),
                retries=retries,
                detach=detach,
                poll_interval_s=poll_interval,
                force=force,
                fail_fast=fail_fast,
                max_restarts=max_restarts,
                vllm_bin=vllm_bin,
                ready_timeout_s=ready_timeout,
                api_key_env=api_key_env,
            ),
            dry_run=dry_run,
        )
        return
    slurm_only = (shard, partition, account, time_limit, nodes, gpus_per_node, gres, constraint)
    if detach or retries or sbatch_option or setup or launcher or any(slurm_only):
        raise SpecbenchError(f"options of the {so.PANEL} need --executor slurm")
    options = CampaignOptions(
        output=output or Path("results") / loaded.name,
        endpoints=parse_endpoints(endpoint or []),
        force=force,
        fail_fast=fail_fast,
        max_restarts=max_restarts,
        vllm_bin=vllm_bin,
        servers=tuple(server or ()),
        ready_timeout_s=ready_timeout,
        api_key=api_key,
    )
    with RichCampaignProgress() as progress:
        result = run_campaign(loaded, options, progress)
    console.print(campaign_table(loaded, result))
    skipped = len(result.outcomes) - len(result.measured) - len(result.failed)
    console.print(
        f"{len(result.measured)} cells measured, {skipped} already complete, "
        f"{len(result.failed)} failed; results in {options.output}"
    )
    if result.failed:
        raise CellsFailed(
            f"{len(result.failed)} cell(s) failed; see failure.json in {options.output}"
        )
