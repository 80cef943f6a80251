"""Markdown and terminal renderings of a report table (`analysis.table.Table`).

Markdown is GitHub-flavoured and ready to paste into a model card; the terminal gets a
rich table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from specbench.common.text import markdown_table

if TYPE_CHECKING:
    from rich.console import RenderableType

    from specbench.analysis.table import Table


def to_markdown(table: Table, *, heading_level: int = 3, fold: bool = False) -> str:
    """The table as a markdown section: heading, table, footnotes in italics. `fold`: a
    folded table (`Table.shown_rows`) prints its shown rows and says where the rest is
    (its own file, `tables/NAME.md`, which holds every row)."""
    lines = [f"{'#' * heading_level} {table.title}", ""]
    folded = fold and table.folded()
    rows = [
        tuple(f"**{c}**" if c and index in table.bold_rows else c for c in row)
        for index, row in enumerate(table.rows)
        if not folded or index in (table.shown_rows or ())
    ]
    lines += markdown_table(table.columns, rows, align=table.alignment())
    if folded:
        hidden = len(table.rows) - len(rows)
        lines += [
            "",
            f"_{table.folded_note}; the other {hidden} rows: "
            f"[tables/{table.name}.md](tables/{table.name}.md)._",
        ]
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


def join_sections(sections: Sequence[str]) -> str:
    """Markdown sections separated by one blank line."""
    return "\n".join(s.rstrip("\n") + "\n" for s in sections)
