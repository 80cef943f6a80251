"""`specbench export profile`: machine-readable speculation profiles from a results directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

export_app = typer.Typer(
    help="Export machine-readable data from a results directory (offline).",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")


@export_app.command(name="profile")
def profile(
    results_dir: Annotated[Path, typer.Argument(help="A results directory.", show_default=False)],
    out: Annotated[
        Path | None, typer.Option(help="Output folder; default RESULTS_DIR/profiles.")
    ] = None,
) -> None:
    """One versioned JSON per speculative config: AL, per-position acceptance, histogram, cuts."""
    from specbench.analysis.profile import write_profiles
    from specbench.cli.console import make_console

    console = make_console()
    for path in write_profiles(results_dir, out):
        console.print(f"profile written to {path}", soft_wrap=True, markup=False)
