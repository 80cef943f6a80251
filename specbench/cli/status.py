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
    from specbench.cli.progress import results_console as console
    from specbench.cli.slurm import earlier_attempts, failures, jobs_table, totals
    from specbench.slurm.status import collect_status

    current = collect_status(results)
    console.print(jobs_table(current))
    console.print(totals(current))
    for text in earlier_attempts(current):
        console.print(text, markup=False, soft_wrap=True)
    if current.failed:
        console.print(failures(current))
