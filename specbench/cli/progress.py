"""Progress bars (on stderr) and result tables (on stdout) of the measuring commands.

Also `data prepare`'s bars (one per config).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from specbench.cli.console import make_console
from specbench.cli.lines import line, plain
from specbench.cli.log_progress import LogRunProgress
from specbench.client.record import RequestRecord
from specbench.common.text import Align, formatted
from specbench.measure.cell import CellOutcome, CellProgress, CellSpec
from specbench.metrics.speedup import compare_per_gpu, throughput_speedup
from specbench.run.orchestrator import RunProgress, RunResult
from specbench.run.plan import Plan
from specbench.store.summary import CellSummary
from specbench.suite import Cell

#: Progress bars, server events, logs and warnings: stderr, so that stdout holds results only.
console = make_console(stderr=True)
#: Results: tables, verdicts and the closing summary line (`specbench run … > run.log`).
results_console = make_console()


class RichCellProgress(CellProgress):
    """One bar per cell: conversations done, failures and live output tok/s."""

    def __init__(self) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            refresh_per_second=4,
        )
        self._task: TaskID | None = None
        self._tokens = 0
        self._failed = 0
        self._start = 0.0
        self._acceptance = ""
        self._precision = ""
        self._target: float | None = None

    def start(self, spec: CellSpec, total_conversations: int) -> None:
        self._start = time.monotonic()
        self._target = spec.precision
        self._progress.start()
        self._task = self._progress.add_task(
            f"{spec.label} c={spec.concurrency} r={spec.repeat}", total=total_conversations, rate=""
        )

    def record(self, record: RequestRecord) -> None:
        self._tokens += record.output_tokens or 0
        self._failed += not record.ok
        # Every turn gets a record (turns after a failed one as skipped): the last one ends it.
        done = record.turn + 1 == record.num_turns
        elapsed = max(time.monotonic() - self._start, 1e-9)
        rate = f"{self._tokens / elapsed:,.0f} tok/s{self._acceptance}{self._precision}" + (
            f" [red]{self._failed} failed[/]" if self._failed else ""
        )
        if self._task is not None:
            self._progress.update(self._task, advance=1 if done else 0, rate=rate)

    def acceptance(self, acceptance_length: float) -> None:
        self._acceptance = f" AL {acceptance_length:.2f}"

    def precision(self, worst: float | None, conversations: int) -> None:
        # The ETA column assumes every conversation: an upper bound for a targeted cell.
        if worst is not None and self._target is not None:
            self._precision = f" ±{worst:.1%} (target {self._target:.0%}, eta ≤)"

    def stop(self) -> None:
        self._progress.stop()


fmt = formatted  # the terminal tables' name for common.text.formatted


def throughput(summary: CellSummary) -> str:
    """tok/s per GPU, or per server (marked) when the GPU count is unknown."""
    if summary.output_tok_s_per_gpu is not None:
        return fmt(summary.output_tok_s_per_gpu, ",.1f")
    return fmt(summary.output_tok_s, ",.1f") + " /server"


def reset_mark(summary: CellSummary) -> str | Text:
    """The prefix-cache reset before the window: yes, NO (red), or – (not attempted)."""
    if summary.prefix_cache_reset is None:
        return "–"
    return "yes" if summary.prefix_cache_reset else Text("NO", style="red")


def cells_table(summaries: Sequence[CellSummary], title: str = "specbench results") -> Table:
    """The end-of-run table: one row per cell."""
    table = Table(title=title)
    for column in (
        "label",
        "dataset",
        "conc",
        "rep",
        "ok/all",
        "tok/s/GPU",
        "TTFT p50 ms",
        "E2E p50 ms",
        "AL",
        "accept",
        "in flight",
        "preempt",
        "cache reset",
    ):
        table.add_column(column, justify="right" if column not in ("label", "dataset") else "left")
    for s in summaries:
        spec = s.spec_decode
        table.add_row(
            s.label,
            s.dataset,
            str(s.concurrency),
            str(s.repeat),
            f"{s.num_requests - s.num_failed}/{s.num_requests}",
            throughput(s),
            fmt(s.ttft_ms.median, ",.1f"),
            fmt(s.e2e_ms.median, ",.0f"),
            fmt(spec.acceptance_length if spec else None),
            fmt(spec.draft_acceptance_rate if spec else None, ".1%"),
            fmt(s.achieved_concurrency, ".1f"),
            str(s.server_preemptions) if s.server_preemptions is not None else "–",
            reset_mark(s),
        )
    return table


class RichRunProgress(RunProgress):
    """The campaign bar (cells done / total, ETA) above each cell's own bar."""

    def __init__(self, *, campaign_bar: bool = True) -> None:
        self._campaign_bar = campaign_bar
        self._progress = Progress(
            TextColumn("[bold]campaign"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=2,
        )
        self._task: TaskID | None = None
        self._total = 0

    def __enter__(self) -> RichRunProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def begin(self, total: int, complete: int) -> None:
        self._total = total
        if self._campaign_bar:
            self._task = self._progress.add_task("campaign", total=total, completed=0)

    def more(self, cells: int) -> None:
        self._total += cells
        if self._task is not None:
            self._progress.update(self._task, total=self._total)

    def server(self, name: str, message: str) -> None:
        self._progress.console.print(line(f"server {name}:", "cyan", message), soft_wrap=True)

    def warn(self, message: str) -> None:
        self._progress.console.print(line("warning:", "yellow", message), soft_wrap=True)

    def cell(self, cell: Cell) -> CellProgress:
        return RichCellProgress()

    def cell_done(self, cell: Cell, outcome: CellOutcome) -> None:
        if outcome.error:
            failed = line("failed", "red", f"{cell.key}: {outcome.error}")
            self._progress.console.print(failed, soft_wrap=True)
        elif outcome.skipped:
            self._progress.console.print(plain(f"skip {cell.key}: already complete", "dim"))
        if self._task is not None:
            self._progress.advance(self._task)


def campaign_progress(*, campaign_bar: bool = True) -> RichRunProgress | LogRunProgress:
    """Live bars on a terminal; log lines (one per cell, heartbeats) when stderr is a file or
    a pipe, as in CI."""
    if console.is_terminal:
        return RichRunProgress(campaign_bar=campaign_bar)
    return LogRunProgress(console)


#: The closing table's columns, after `cell`.
RUN_COLUMNS = ("ok/all", "tok/s/GPU", "speedup", "TTFT p50 ms", "E2E p50 ms", "AL", "cache reset")


def run_table(plan: Plan, result: RunResult, width: int) -> Table:
    """All cells with AL, tok/s/GPU and the speedup against the matching baseline cell, in
    `width` columns: no figure cut; cell keys lose the words every workload shares, then
    break after a `/`, then lose the middle of their workload names, only as far as needed
    (a caption says so)."""
    from specbench.render.widths import (
        CUT,
        fitted_table,
        shorter_workloads,
        with_workload,
        workload_of,
        wrap_key,
    )

    baselines = {name for name, server in plan.servers.items() if server.baseline}
    baseline = {
        (cell.workload_index, cell.concurrency, cell.launch, cell.repeat): outcome.summary
        for cell, outcome in result.outcomes.items()
        if cell.server in baselines and outcome.summary
    }
    title = f"suite {plan.suite.name}" if plan.suite else "specbench results"
    figures: list[tuple[str, list[str | Text]]] = []
    for cell, outcome in result.outcomes.items():
        summary = outcome.summary
        if summary is None:
            figures.append((cell.key, [plain("failed", "red"), *([""] * 6)]))
            continue
        reference = baseline.get((cell.workload_index, cell.concurrency, cell.launch, cell.repeat))
        speedup = None
        if reference is not None and cell.server not in baselines:
            per_gpu = compare_per_gpu(
                summary.output_tok_s_per_gpu is not None,
                reference.output_tok_s_per_gpu is not None,
            )
            speedup = throughput_speedup(
                summary.output_tok_s_per_gpu if per_gpu else summary.output_tok_s,
                reference.output_tok_s_per_gpu if per_gpu else reference.output_tok_s,
            )
        figures.append(
            (
                cell.key,
                [
                    f"{summary.num_requests - summary.num_failed}/{summary.num_requests}",
                    throughput(summary),
                    fmt(speedup, ".2f") + ("×" if speedup else ""),
                    fmt(summary.ttft_ms.median, ",.1f"),
                    fmt(summary.e2e_ms.median, ",.0f"),
                    fmt(summary.spec_decode.acceptance_length if summary.spec_decode else None),
                    reset_mark(summary),
                ],
            )
        )
    headers = ("cell", *RUN_COLUMNS)
    justify: list[Align] = ["left" if column == "cell" else "right" for column in headers]
    names = list(shorter_workloads([workload_of(key) for key, _ in figures]))
    whole = [short for short in names if CUT not in short.caption]
    longest = max((len(key) for key, _ in figures), default=1)
    # Whole names on one line, then broken after a `/`; names cut is the last resort.
    tries = [(short, longest) for short in whole]
    tries += [(whole[-1], width) for width in range(longest - 1, 3, -1)]
    tries += [(short, longest) for short in names if CUT in short.caption]
    for short, key_width in tries:
        rows = [
            [wrap_key(with_workload(key, short.names), key_width), *cells] for key, cells in figures
        ]
        caption = short.caption or None
        table = fitted_table(
            headers, justify, rows, width, title=title, caption=caption, caption_justify="left"
        )
        if table is not None:
            return table
    rows = [[key, *cells] for key, cells in figures]
    table = fitted_table(headers, justify, rows, width, strict=False, title=title)
    assert table is not None  # not strict: always a table
    return table


@contextmanager
def config_bars() -> Iterator[Callable[[str, int, int], None]]:
    """`data prepare`: one bar per config, rows resolved of the config's rows."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=make_console(stderr=True),
        transient=False,
    ) as bars:
        tasks: dict[str, TaskID] = {}

        def step(config: str, done: int, total: int) -> None:
            if config not in tasks:  # a bar appears when its config starts
                tasks[config] = bars.add_task(config, total=total)
            bars.update(tasks[config], completed=done)

        yield step
