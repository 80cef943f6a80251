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
    """Show each shard's job (pending, running, done, failed) and its cells completed."""
    from specbench.cli.progress import console
    from specbench.cli.slurm import failures, jobs_table, totals
    from specbench.slurm.status import collect_status

    current = collect_status(results)
    console.print(jobs_table(current))
    console.print(totals(current))
    if current.failed:
        console.print(failures(current))
