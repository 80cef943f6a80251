"""Plain text for people: the one markdown-table renderer and the number formatters.

Report (analysis/), gate and lossless all render tables here, so a pipe in a cell, the
alignment row and a missing value read the same everywhere. Every formatter takes None
or a non-finite value as missing and prints `missing` instead (tables of the report use
an em dash, the gate's and lossless' logs an en dash, as they always have).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

Align = Literal["left", "right"]
EM_DASH = "\u2014"
EN_DASH = "\u2013"


def _missing(value: float | None) -> bool:
    return value is None or not math.isfinite(value)


def fixed(value: float | None, digits: int, *, missing: str = EM_DASH) -> str:
    """`digits` decimals: `2.82`."""
    return missing if _missing(value) else f"{value:.{digits}f}"


def grouped(value: float | None, digits: int, *, missing: str = EM_DASH) -> str:
    """`digits` decimals, thousands separated: `3,041.5`."""
    return missing if _missing(value) else f"{value:,.{digits}f}"


def percent(fraction: float | None, digits: int = 2, *, missing: str = EM_DASH) -> str:
    """A fraction in percent: `55.62%` from 0.5562."""
    if _missing(fraction):
        return missing
    assert fraction is not None
    return f"{fraction * 100:.{digits}f}%"


def significant(value: float | None, digits: int = 4, *, missing: str = EN_DASH) -> str:
    """`digits` significant digits, thousands separated (2.816, 3,041, 0.4213); integral
    values as counts (`3`)."""
    if _missing(value):
        return missing
    assert value is not None
    if float(value).is_integer():
        return f"{int(value):,}"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    return f"{value:,.{decimals}f}"


def formatted(value: float | None, spec: str = ".2f", *, missing: str = EN_DASH) -> str:
    """`format(value, spec)` for live terminal tables (`,.1f`, `.1%`)."""
    return missing if value is None else format(value, spec)


def markdown_cell(text: str) -> str:
    """A cell's text with its pipes escaped (GitHub-flavoured markdown)."""
    return text.replace("|", "\\|")


def markdown_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    align: Sequence[Align] | None = None,
    left: int = 1,
) -> list[str]:
    """Lines of a GitHub-flavoured table; the first `left` columns left-aligned, the rest
    right-aligned, unless `align` names each column's alignment."""
    left_align: list[Align] = ["left"] * left
    right_align: list[Align] = ["right"] * (len(columns) - left)
    alignment = align if align is not None else left_align + right_align
    lines = ["| " + " | ".join(markdown_cell(c) for c in columns) + " |"]
    lines.append("|" + "|".join("---:" if a == "right" else "---" for a in alignment) + "|")
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows]
    return lines
