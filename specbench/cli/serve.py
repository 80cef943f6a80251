"""`specbench serve SUITE --config NAME`: one server config of a suite, up until Ctrl-C."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from specbench.cli import options as o


def register(app: typer.Typer) -> None:
    """Add the `serve` command to `app`."""
    app.command("serve")(serve)


def serve(
    suite: Annotated[Path, typer.Argument(help="Suite TOML file.")],
    config: Annotated[str, typer.Option("--config", help="Server config name in the suite.")],
    vllm_bin: o.VllmBin = None,
    gpus_unchecked: o.GpusUnchecked = False,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int | None, typer.Option(help="Port (default: a free one).")] = None,
    log_dir: Annotated[Path, typer.Option(help="Folder for the server log.")] = Path(
        "results/serve"
    ),
    overrides: o.Overrides = None,
    ready_timeout_s: o.ReadyTimeout = o.READY_TIMEOUT_S,
) -> None:
    """Start one server config of SUITE and keep it up until Ctrl-C, printing its endpoint."""
    from specbench.launch.provenance import ServerProvenance
    from specbench.run.serve import serve_suite_config

    def announce(provenance: ServerProvenance) -> None:
        version = f"vLLM {provenance.vllm_version}" if provenance.vllm_version else "no /version"
        typer.echo(f"command: {provenance.command}")
        typer.echo(f"log: {provenance.log_path}")
        typer.echo(
            f"ready: {provenance.base_url} model={provenance.served_model_name} ({version}, "
            f"up in {provenance.startup_s:.1f} s); Ctrl-C to stop"
        )

    serve_suite_config(
        suite,
        config,
        on_ready=announce,
        overrides=overrides or (),
        vllm_bin=vllm_bin,
        host=host,
        port=port,
        log_dir=log_dir,
        ready_timeout_s=ready_timeout_s,
        gpus_unchecked=gpus_unchecked,
    )
