"""`specbench run SUITE`: run a whole campaign (or print it with --dry-run)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from specbench.errors import CellsFailed, SpecbenchError


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
) -> None:
    """Start each server once, measure every missing cell, and print AL, tok/s/GPU and speedup."""
    from specbench.campaign import CampaignOptions, run_campaign
    from specbench.cli.progress import RichCampaignProgress, campaign_table, console
    from specbench.suite import describe_suite, load_suite

    loaded = load_suite(suite, set_ or ())
    if dry_run:
        typer.echo(describe_suite(loaded))
        return
    api_key = os.environ.get(api_key_env) if api_key_env else None
    if api_key_env and not api_key:
        raise SpecbenchError(f"--api-key-env: environment variable {api_key_env} is not set")
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
