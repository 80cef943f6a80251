"""One report table: display strings plus the unrounded data, and its JSON form.

The renderers (`specbench.render`: markdown, terminal, HTML) print its display rows; CSV
and JSON hold the unrounded data frame behind it. No renderer computes a number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from specbench.common.text import Align

if TYPE_CHECKING:
    import pandas as pd


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
    #: Rows a page shows before the reader unfolds the rest (a long table folded to the
    #: card's concurrency, with what `folded_note` says); None: every row.
    shown_rows: frozenset[int] | None = None
    folded_note: str = ""

    def folded(self) -> bool:
        """Whether some rows wait behind a click (and a line saying where they are)."""
        return self.shown_rows is not None and len(self.shown_rows) < len(self.rows)

    def alignment(self) -> tuple[Align, ...]:
        """Column alignment: first column left, the rest right, unless given."""
        if self.align:
            return self.align
        left: Align = "left"
        right: Align = "right"
        return (left, *([right] * (len(self.columns) - 1)))


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
