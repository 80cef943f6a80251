"""A report section as a declaration, and the walk that builds a list of them.

A `Section` names itself and, given the report's inputs, yields its parts in order: a
table to build (`TablePart`: the analysis layer's pure builder, and the figures drawn from
the table once built) or the one-line reason a table is absent ("Not built"). The title
and the footnotes of a table are its builder's (they depend on the data); its anchor in
report.html and its file names are the table's or figure's name. `build_sections` walks the
list into a `ReportOutcome`; the renderers (markdown, HTML, CSV/JSON, png/svg) then print
the outcome without knowing which section made what.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from specbench.render.outcome import (
    FigureShown,
    ReportOptions,
    ReportOutcome,
    add_figure,
    try_table,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from specbench.advise.advice import Advice
    from specbench.advise.slo import Slo
    from specbench.analysis.intervals import Calibration
    from specbench.analysis.table import Table
    from specbench.results.loading import LoadedCell
    from specbench.results.selection import Selection


@dataclass(frozen=True, slots=True)
class ReportInputs:
    """What every section reads: the loaded cells, their frames, the labels picked, options."""

    frame: pd.DataFrame
    categories: pd.DataFrame
    cells: Sequence[LoadedCell]
    selection: Selection
    options: ReportOptions
    #: `--variance-from`'s between-launch variance; None: one launch is labelled so.
    calibration: Calibration | None = None
    #: The K grid's advice (`advise`); None where the results hold no K sweep.
    advice: Advice | None = None
    #: Latency bounds of the capacity section (`--slo`, else the suite's `[slo]`).
    slo: Slo | None = None


@dataclass(frozen=True, slots=True)
class FigureSpec:
    """One figure of a table: its name (file stem, anchor), title, plot and what the page
    shows beside it."""

    name: str
    title: str
    draw: Callable[[], Figure]
    shown: FigureShown | None = None


def no_figures(table: Table) -> Sequence[FigureSpec]:
    """A table without a figure."""
    return ()


@dataclass(frozen=True, slots=True)
class TablePart:
    """One table of a section: its builder (raises `TableUnavailable` when its data is
    absent) and its figures, drawn from the built table."""

    build: Callable[[], Table]
    figures: Callable[[Table], Sequence[FigureSpec]] = no_figures


#: A section's part: a table to build, or the reason one is not built.
Part = TablePart | str


@dataclass(frozen=True, slots=True)
class Section:
    """One entry of the report: its name and the parts it yields, in order."""

    name: str
    parts: Callable[[ReportInputs], Iterable[Part]]


def build_sections(
    outcome: ReportOutcome, sections: Sequence[Section], inputs: ReportInputs
) -> None:
    """Build every section's tables and figures into `outcome`, in the list's order."""
    for section in sections:
        for part in section.parts(inputs):
            if isinstance(part, str):
                outcome.not_built.append(part)
                continue
            table = try_table(outcome, part.build)
            if table is None:
                continue
            outcome.section_of[table.name] = section.name
            for figure in part.figures(table):
                add_figure(
                    outcome,
                    figure.name,
                    figure.title,
                    figure.draw(),
                    inputs.options.formats,
                    figure.shown,
                    table.name,
                )
