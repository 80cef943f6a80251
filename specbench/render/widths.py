"""Terminal tables that fit the console's width without cutting a word.

rich, given a table wider than the console, shrinks its widest columns below their longest
word and cuts numbers and names to `2…`. Here each column is given a fixed width instead:
at least its longest word (the header's included), so a number or a cell key is never
cut, with the spare columns spread where they save a wrapped header; `fitted_table`
returns None when even those minimums do not fit, and the caller shortens or stacks.

Cell keys (`server/workload/cN…`) are shortened in their workload part only, and only as
far as the width needs (`shorter_workloads`): first without the words every workload
shares (`speed-bench-`), then cut in the middle with `…`, always distinct.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from specbench.common.text import Align

#: Where a workload name may be split into words: `speed-bench-throughput_1k+coding`.
_WORD_END = re.compile(r"(?<=[-_+.])")
#: The narrowest a shortened workload name gets: `ab…yz`.
MIN_NAME = 5
#: How a caption says that names were cut.
CUT = "cut in the middle (…)"


@dataclass(frozen=True, slots=True)
class Bounds:
    """A column's narrowest width (its longest word) and its natural width (longest line)."""

    minimum: int
    maximum: int


def plain(cell: str | Text) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def bounds(texts: Sequence[str]) -> Bounds:
    """The bounds of a column whose header and cells are `texts` (words split at spaces)."""
    words = [word for text in texts for line in text.splitlines() for word in line.split()]
    lines = [line for text in texts for line in text.splitlines()]
    return Bounds(
        max((cell_len(word) for word in words), default=1),
        max((cell_len(line) for line in lines), default=1),
    )


def spread(columns: Sequence[Bounds], available: int) -> list[int] | None:
    """Content widths within `available` columns: each at least its minimum; the spare goes
    to the columns that need least of it to show their longest line on one line, so the
    fewest headers wrap. None when the minimums alone exceed `available`."""
    widths = [column.minimum for column in columns]
    spare = available - sum(widths)
    if spare < 0:
        return None
    for index in sorted(range(len(columns)), key=lambda i: columns[i].maximum - widths[i]):
        grant = min(spare, columns[index].maximum - widths[index])
        widths[index] += grant
        spare -= grant
    return widths


def overhead(table: Table) -> int:
    """Columns a rich table adds to its cells' contents: borders and padding."""
    count = len(table.columns)
    borders = 0
    if table.box is not None:
        borders = count - 1 + (2 if table.show_edge else 0)
    _, right, _, left = table.padding
    padding = count * (left + right)
    if not table.pad_edge:
        padding -= left + right
    return borders + padding


def fitted_table(
    headers: Sequence[str],
    justify: Sequence[Align],
    rows: Sequence[Sequence[str | Text]],
    width: int,
    *,
    strict: bool = True,
    **options: Any,
) -> Table | None:
    """A rich table of `rows` (plain strings, never markup, or styled `Text`) whose columns
    have fixed widths that fit `width` and cut no word; None when it cannot fit, or with
    `strict=False` the table as rich lays it out, long cells folded rather than cut.
    `options` are rich's `Table` arguments (box, padding, title, …)."""
    table = Table(**options)
    columns = [
        bounds([header, *(plain(row[i]) for row in rows)]) for i, header in enumerate(headers)
    ]
    for header, align in zip(headers, justify, strict=True):
        table.add_column(header, justify=align, overflow="fold")
    widths = spread(columns, width - overhead(table))
    if widths is None and strict:
        return None
    for column, content in zip(table.columns, widths or (), strict=False):
        column.width = content
    for row in rows:  # a plain string as Text: `acceptance_length[coding]` is not markup
        table.add_row(*(cell if isinstance(cell, Text) else Text(cell) for cell in row))
    return table


def _common_words(names: Sequence[str]) -> str:
    """The leading whole words (`speed-bench-`) that every name shares and none is made of
    entirely."""
    split = [_WORD_END.split(name) for name in names]
    shared: list[str] = []
    for words in zip(*split, strict=False):
        if len(set(words)) != 1:
            break
        shared.append(words[0])
    while shared and any(len(words) <= len(shared) for words in split):
        shared.pop()  # a name made only of the shared words would vanish
    return "".join(shared)


def _middle(name: str, length: int) -> str:
    """`name` in `length` characters, its start and end kept around `…`."""
    if len(name) <= length:
        return name
    end = (length - 1) // 2
    return name[: length - 1 - end] + "…" + (name[-end:] if end else "")


@dataclass(frozen=True, slots=True)
class Shortened:
    """Workload names as shown, and the line that says how they were shortened ("" none)."""

    names: Mapping[str, str]
    caption: str = ""


def shorter_workloads(workloads: Sequence[str]) -> Iterator[Shortened]:
    """Ever shorter, always distinct names for `workloads`: as they are; without the words
    they all share; then cut in the middle, one character at a time, down to MIN_NAME."""
    distinct = list(dict.fromkeys(workloads))
    yield Shortened({name: name for name in distinct})
    prefix = _common_words(distinct) if len(distinct) > 1 else ""
    if len(distinct) == 1 and len(_WORD_END.split(distinct[0])) > 1:
        prefix = "".join(_WORD_END.split(distinct[0])[:-1])
    rest = {name: name[len(prefix) :] for name in distinct}
    caption = f"workloads shown without `{prefix}`" if prefix else ""
    if prefix:
        yield Shortened(rest, caption)
    longest = max((len(name) for name in rest.values()), default=0)
    for length in range(longest - 1, MIN_NAME - 1, -1):
        names = {name: _middle(short, length) for name, short in rest.items()}
        if len(set(names.values())) < len(names):
            return  # shorter would merge two workloads
        note = "; " if caption else "workload names "
        yield Shortened(names, f"{caption}{note}{CUT}")


def workload_of(key: str) -> str:
    """The workload part of a cell key `server/workload/cN…`."""
    parts = key.split("/")
    return parts[1] if len(parts) > 2 else ""


def with_workload(key: str, names: Mapping[str, str]) -> str:
    """`key` with its workload part shown as `names` has it."""
    parts = key.split("/")
    if len(parts) > 2 and parts[1] in names:
        parts[1] = names[parts[1]]
    return "/".join(parts)


def wrap_key(key: str, width: int) -> str:
    """`key` on lines of at most `width` characters, broken only after a `/` (a part longer
    than `width` stays whole on its own line): `baseline/` `qualitative/c8/r0`."""
    lines: list[str] = []
    for part in (f"{p}/" for p in key.split("/")):
        if lines and len(lines[-1]) + len(part) <= width + (part == key.split("/")[-1] + "/"):
            lines[-1] += part
        else:
            lines.append(part)
    return "\n".join(lines)[:-1]  # the last part's added `/`
