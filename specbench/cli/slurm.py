"""`run --executor slurm` in the terminal: the live jobs table, failures, Ctrl-C.

The live table, submissions, state changes and warnings go to stderr; the final jobs
table, totals, earlier attempts and failures (what `specbench status` prints) to stdout.

`specbench status` draws the same table from a results directory later. The options
themselves live in `cli/options.py` (light to import); the `[slurm]` settings come from the
suite or `--set slurm.FIELD=VALUE` (run's old flags for them: `cli/deprecated.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from specbench.cli.lines import line, plain
from specbench.cli.progress import console, results_console
from specbench.common import interrupt
from specbench.common.errors import CellsFailed, SpecbenchError
from specbench.common.validation import describe_validation_error
from specbench.slurm.executor import SlurmRun, SlurmWatcher, describe_plan, run_on_slurm
from specbench.slurm.status import CampaignStatus, ShardStatus
from specbench.suite import SlurmSettings, Suite, describe_suite


def settings_with(base: SlurmSettings, **overrides: Any) -> SlurmSettings:
    """`[slurm]` with the CLI's values on top (None leaves the suite's); validated again."""
    values = base.model_dump()
    for key, value in overrides.items():
        if value is not None and value != []:
            values[key] = value
    try:
        return SlurmSettings.model_validate(values)
    except ValidationError as error:
        raise SpecbenchError(
            describe_validation_error(error, SlurmSettings, "slurm.", Path("options"))
        ) from None


def state_style(row: ShardStatus) -> str:
    return {
        "pending": "yellow",
        "running": "cyan",
        "done": "green",
        "failed": "bold red",
    }.get(row.category, "dim")


def clock(moment: str | None) -> str:
    """`02:33:11` of an ISO time (the job's UTC record, or Slurm's controller time)."""
    return moment[11:19] if moment and len(moment) >= 19 else "–"


def jobs_table(status: CampaignStatus) -> Table:
    """Jobs (state, node, start and end, attempts) and cells completed per shard."""
    table = Table(title=f"suite {status.suite_name} on Slurm", caption=str(status.output))
    columns = ("shard", "job", "state", "node", "start", "end", "cells", "failed", "tries", "log")
    for column in columns:
        table.add_column(
            column, justify="right" if column in ("cells", "failed", "tries") else "left"
        )
    for row in status.shards:
        table.add_row(
            row.shard,
            row.job_id or "–",
            Text(row.state, style=state_style(row)),
            row.node or "–",
            clock(row.started_at),
            clock(row.finished_at),
            f"{row.cells_done}/{row.cells_total}",
            str(row.cells_failed) if row.cells_failed else "",
            str(row.attempts),
            Path(row.log_path).name if row.log_path else "",
        )
    return table


def totals(status: CampaignStatus) -> str:
    """`jobs: 1 pending, 1 running, 2 done, 0 failed; cells 5/8` (jobs of the latest plan)."""
    counts = ", ".join(
        f"{status.count(name)} {name}" for name in ("pending", "running", "done", "failed")
    )
    return f"jobs: {counts}; cells {status.cells_done}/{status.cells_total}"


def earlier_attempts(status: CampaignStatus) -> list[str]:
    """One line per earlier job of a shard: `eagle3: attempt 1, job 3 NODE_FAIL on node1 …`."""
    return [
        f"{row.shard}: attempt {old.attempt}, job {old.job_id} {old.state} on "
        f"{old.node or '?'} ({clock(old.started_at)}–{clock(old.finished_at)})"
        for row in status.shards
        for old in row.earlier
    ]


def failures(status: CampaignStatus) -> Group:
    """Each failed job: its Slurm state, exit code, reason, log path and log tail."""
    parts: list[Any] = []
    for row in status.failed:
        details = [f"exit {row.exit_code}"] if row.exit_code else []
        if row.reason:
            details.append(f"reason {row.reason}")
        suffix = f" ({', '.join(details)})" if details else ""
        parts.append(
            line(
                f"{row.shard}:",
                "bold red",
                f"job {row.job_id} {row.state}{suffix}; "
                f"{row.cells_total - row.cells_done} cell(s) missing; log {row.log_path}",
            )
        )
        parts.extend(Text(f"    {line}", style="dim") for line in row.log_tail())
    return Group(*parts)


class RichSlurmWatcher(SlurmWatcher):
    """Prints submissions and state changes as lines; keeps the jobs table live."""

    def __init__(self, live: Live) -> None:
        self._live = live
        self._seen: dict[str, str] = {}

    def warn(self, message: str) -> None:
        self._live.console.print(line("warning:", "yellow", message), soft_wrap=True)

    def submitted(self, shard: str, job_id: str, attempt: int) -> None:
        again = f" (attempt {attempt})" if attempt > 1 else ""
        self._live.console.print(line("submitted", "cyan", f"{shard}: job {job_id}{again}"))
        self._seen[shard] = f"{job_id}:PENDING"

    def skipped(self, shard: str, reason: str) -> None:
        self._live.console.print(plain(f"skip {shard}: {reason}", "dim"), soft_wrap=True)

    def update(self, status: CampaignStatus) -> None:
        for row in status.shards:
            key = f"{row.job_id}:{row.state}"
            if row.job_id and self._seen.get(row.shard, key) != key:
                where = f" on {row.node}" if row.node and row.category != "pending" else ""
                self._live.console.print(plain(f"{row.shard}: job {row.job_id} {row.state}{where}"))
            self._seen[row.shard] = key
        self._live.update(Group(jobs_table(status), Text(totals(status))))


def print_status(status: CampaignStatus) -> None:
    """The jobs table, its totals, earlier attempts and failures, on stdout (`run`, `status`)."""
    results_console.print(jobs_table(status))
    results_console.print(totals(status))
    for text in earlier_attempts(status):
        results_console.print(text, markup=False, soft_wrap=True)
    if status.failed:
        results_console.print(failures(status))


def run_slurm(suite: Suite, request: SlurmRun, *, dry_run: bool = False) -> None:
    """Submit and (unless detached) watch; failures are one line each plus the log tail.

    `dry_run` prints the suite, the shards and each batch script, and submits nothing.
    """
    if dry_run:
        described = describe_plan(suite, request)  # after the submitter's preflight
        typer.echo(describe_suite(suite))
        typer.echo(described)
        return
    with Live(Text(""), console=console, refresh_per_second=2, transient=True) as live:
        watcher = RichSlurmWatcher(live)
        try:
            status = run_on_slurm(suite, request, watcher)
        except (KeyboardInterrupt, interrupt.Interrupted) as stop:
            live.stop()
            code = stop.exit_code if isinstance(stop, interrupt.Interrupted) else 130
            console.print(
                line(
                    "stopped watching:",
                    "yellow",
                    "nothing was cancelled and the jobs keep running; "
                    f"`specbench status {request.output}` shows them, `scancel JOBID` stops one",
                ),
                soft_wrap=True,
            )
            raise typer.Exit(code) from None
    # The jobs table and what it sums up are the results: stdout (progress stays on stderr).
    print_status(status)
    if request.detach and status.active:
        jobs = " ".join(row.job_id for row in status.active if row.job_id)
        results_console.print(
            f"submitted; jobs {jobs} run on their own: `specbench status {request.output}`",
            soft_wrap=True,
            markup=False,
        )
        return
    if status.failed:
        raise CellsFailed(
            f"{len(status.failed)} shard job(s) failed; rerun to resubmit what is missing "
            "(or pass --retries N)"
        )
    results_console.print(
        f"{status.cells_done}/{status.cells_total} cells complete in {request.output}", markup=False
    )
