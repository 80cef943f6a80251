"""`specbench status RESULTS_DIR`: the jobs and cells of a Slurm campaign, as `run` shows them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command(name="status")(status)


def status(
    results: Annotated[Path, typer.Argument(help="Results directory of a Slurm campaign.")],
) -> None:
    """Show each shard's job (state, node, start and end), its cells completed, and the
    shard's earlier attempts."""
    from specbench.cli.slurm import print_status
    from specbench.slurm.status import collect_status

    print_status(collect_status(results))
