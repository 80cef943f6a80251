"""A rendered table (display strings plus the unrounded data) and its three renderings.

Markdown is GitHub-flavoured and ready to paste into a model card; CSV holds the
unrounded data frame behind the table; the terminal gets a rich table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from specbench.common.text import Align, markdown_table

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import RenderableType


@dataclass(frozen=True, slots=True)
class Table:
    """One report table: what to print, and the numbers it came from."""

    name: str  # file stem, e.g. `al_by_domain`
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    data: pd.DataFrame  # unrounded values, written as CSV/JSON
    align: tuple[Align, ...] = ()
    bold_rows: frozenset[int] = frozenset()
    footnotes: tuple[str, ...] = field(default=())

    def alignment(self) -> tuple[Align, ...]:
        """Column alignment: first column left, the rest right, unless given."""
        if self.align:
            return self.align
        left: Align = "left"
        right: Align = "right"
        return (left, *([right] * (len(self.columns) - 1)))


def to_markdown(table: Table, *, heading_level: int = 3) -> str:
    """The table as a markdown section: heading, table, footnotes in italics."""
    lines = [f"{'#' * heading_level} {table.title}", ""]
    rows = [
        tuple(f"**{c}**" if c and index in table.bold_rows else c for c in row)
        for index, row in enumerate(table.rows)
    ]
    lines += markdown_table(table.columns, rows, align=table.alignment())
    if table.footnotes:
        lines.append("")
        lines.extend(
            f"_{note}_" if len(table.footnotes) == 1 else f"- _{note}_" for note in table.footnotes
        )
    return "\n".join(lines) + "\n"


def to_rich(table: Table) -> RenderableType:
    """The table for the terminal, footnotes below it at full width."""
    from rich.console import Group
    from rich.table import Table as RichTable
    from rich.text import Text

    rich_table = RichTable()
    for name, align in zip(table.columns, table.alignment(), strict=True):
        rich_table.add_column(name, justify=align)
    for index, row in enumerate(table.rows):
        rich_table.add_row(*row, style="bold" if index in table.bold_rows else None)
    notes = [Text(note, style="dim") for note in table.footnotes]
    return Group(Text(table.title, style="bold"), rich_table, *notes, Text(""))


def to_json(table: Table) -> dict[str, Any]:
    """The table as JSON: display rows and the unrounded records."""
    return {
        "name": table.name,
        "title": table.title,
        "columns": list(table.columns),
        "rows": [list(r) for r in table.rows],
        "footnotes": list(table.footnotes),
        "data": _records(table.data),
    }


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    import math

    records = frame.to_dict(orient="records")
    cleaned: list[dict[str, Any]] = []
    for record in records:
        row: dict[str, Any] = {}
        for key, value in record.items():
            if hasattr(value, "item"):
                value = value.item()
            missing_float = isinstance(value, float) and not math.isfinite(value)
            if missing_float or type(value).__name__ in ("NAType", "NaTType"):
                value = None
            row[str(key)] = value
        cleaned.append(row)
    return cleaned


def join_sections(sections: Sequence[str]) -> str:
    """Markdown sections separated by one blank line."""
    return "\n".join(s.rstrip("\n") + "\n" for s in sections)
