"""`specbench status RESULTS_DIR`: a Slurm campaign's jobs and cells, as `run` shows them; a
local results directory's cells per server and workload, and its last run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.table import Table

    from specbench.results.status import LocalStatus


def register(app: typer.Typer) -> None:
    app.command(name="status")(status)


def status(
    results: Annotated[
        Path, typer.Argument(help="A results directory (of `run`, `bench` or a Slurm campaign).")
    ],
) -> None:
    """A Slurm campaign: each shard's job (state, node, start and end), its cells completed,
    its earlier attempts. Otherwise: cells complete, failed and missing per server and
    workload, and the last run (command, host, start and end)."""
    from specbench.slurm.status import is_campaign
    from specbench.store.manifest import read_manifest

    if results.is_dir() and is_campaign(read_manifest(results)):
        from specbench.cli.slurm import print_status
        from specbench.slurm.status import collect_status

        print_status(collect_status(results))
        return
    from specbench.cli.progress import results_console
    from specbench.results.status import collect_local_status, describe_last_run, summary_line

    local = collect_local_status(results)
    results_console.print(cells_table(local))
    for text in [*describe_last_run(local.last_run, local.runs), summary_line(local)]:
        results_console.print(text, markup=False, highlight=False, soft_wrap=True)


def cells_table(local: LocalStatus) -> Table:
    """Per server × workload: cells complete, failed, missing, of how many."""
    from rich.table import Table

    title = f"suite {local.suite_name}" if local.suite_name else "cells on disk (no suite)"
    table = Table(title=title, caption=str(local.output))
    for column in ("server", "workload", "complete", "failed", "missing", "cells"):
        table.add_column(column, justify="left" if column in ("server", "workload") else "right")
    for group in local.groups:
        table.add_row(
            group.server,
            group.workload,
            str(group.complete),
            str(group.failed),
            str(group.missing),
            str(group.total),
        )
    return table
