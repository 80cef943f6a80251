"""The gate's rich table for the CI log: cell, metric, baseline, current, change, tolerance,
verdict; failures in red, passes dim, so the eye lands on what failed."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from specbench.gate.compare import GateReport
from specbench.gate.text import (
    VERDICT_TEXT,
    row_texts,
)

_STYLE = {
    "regression": "bold red",
    "missing": "bold yellow",
    "improved": "green",
    "within_noise": "cyan",
    "new": "blue",
    "pass": "",
}


def gate_table(report: GateReport) -> Table:
    table = Table(title="specbench gate", title_justify="left")
    table.add_column("cell", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    table.add_column("baseline", justify="right")
    table.add_column("current", justify="right")
    table.add_column("change [interval]", justify="right")
    table.add_column("tolerance")
    table.add_column("detectable", justify="right")
    table.add_column("decided by")
    table.add_column("verdict")
    table.add_column("note", overflow="fold")
    for row in report.comparisons:
        style = _STYLE[row.verdict]
        verdict = VERDICT_TEXT[row.verdict]
        table.add_row(
            # escaped: a metric such as `acceptance_length[coding]` is not rich markup
            *map(escape, row_texts(row)),
            f"[{style}]{verdict}[/]" if style else verdict,
            escape(row.note),
        )
    return table
