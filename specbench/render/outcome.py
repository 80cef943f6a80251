"""What `specbench report` is asked for and what it built: options, outcome, figures kept.

`add_figure` saves a figure's files (png, svg) and keeps it inline for report.html with
what the page shows beside it (`FigureShown`: its cells, hover values, AL definition).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from specbench.analysis import tables as T
from specbench.analysis.table import Table
from specbench.common.errors import SpecbenchError
from specbench.render import plots as P
from specbench.render.html import HtmlFigure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from specbench.advise.slo import Slo

FORMATS = ("md", "csv", "json", "png", "svg", "html", "vllm-bench")
DEFAULT_FORMATS = ("md", "csv", "json", "png", "svg", "html")


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """What `specbench report` was asked for."""

    results_dirs: tuple[Path, ...]
    out: Path | None = None
    formats: tuple[str, ...] = DEFAULT_FORMATS
    concurrency: int | None = None
    baseline: str | None = None
    speculative: str | None = None
    #: AL printed first in card tables: "official" (SPEED-Bench) or "step_weighted".
    al_definition: str = "official"
    #: The gate's page (`gate --html FILE`) whose verdict report.html shows.
    gate_page: Path | None = None
    #: An earlier campaign of the same suite (≥ 3 launches) whose between-launch variance
    #: widens one-launch intervals (`analysis.intervals.load_calibration`).
    variance_from: Path | None = None
    #: Latency bounds of the capacity section (`--slo`); None: the suite's `[slo]`, if any.
    slo: Slo | None = None


@dataclass(frozen=True, slots=True)
class SavedFigure:
    """A figure's files (png, svg), and the table it was drawn from."""

    name: str
    title: str
    paths: list[Path]
    table: str | None = None
    #: Shown with the card's tables, before its table (the card's own figure).
    card: bool = False


@dataclass(slots=True)
class ReportOutcome:
    """What was built, what was not (and why), and every file written."""

    out_dir: Path
    tables: list[Table] = field(default_factory=list)
    not_built: list[str] = field(default_factory=list)
    figures: list[SavedFigure] = field(default_factory=list)
    html_figures: list[HtmlFigure] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    #: Table name → the name of the section (`render.sections.SECTIONS`) that built it.
    section_of: dict[str, str] = field(default_factory=dict)


def parse_formats(text: str) -> tuple[str, ...]:
    """`md,csv,png` → ('md', 'csv', 'png'); unknown names are a one-line error."""
    chosen = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown or not chosen:
        raise SpecbenchError(
            f"--format {text!r}: unknown {', '.join(unknown) or 'empty list'}; "
            f"allowed: {', '.join(FORMATS)}"
        )
    return chosen


def try_table(outcome: ReportOutcome, build: Callable[[], Table]) -> Table | None:
    """The built table, kept in the outcome; None and its reason under "Not built"."""
    try:
        table = build()
    except T.TableUnavailable as missing:
        outcome.not_built.append(str(missing))
        return None
    outcome.tables.append(table)
    return table


def add_figure(
    outcome: ReportOutcome,
    name: str,
    title: str,
    figure: Figure,
    formats: Sequence[str],
    shown: FigureShown | None = None,
    table: str | None = None,
) -> None:
    """Save the figure's files (png, svg) and keep it inline for report.html; `table` is
    the table it was drawn from (the figure is placed beside it)."""
    shown = shown or FigureShown()
    kinds = [f for f in formats if f in ("png", "svg")]
    if kinds and not shown.inline_only:
        folder = outcome.out_dir / "figures"
        folder.mkdir(parents=True, exist_ok=True)
        paths = P.save_figure(figure, folder / name, kinds)
        outcome.figures.append(SavedFigure(name, title, paths, table, shown.card))
    if "html" in formats:
        svg = P.svg_text(figure, salt=name + ("-alt" if shown.inline_only else ""))
        outcome.html_figures.append(
            HtmlFigure(
                name,
                title,
                svg,
                shown.basis,
                shown.points,
                shown.al,
                shown.al_pair,
                table=table,
                card=shown.card,
            )
        )


@dataclass(frozen=True, slots=True)
class FigureShown:
    """How report.html shows a figure: its cells, hover values, AL definition."""

    basis: Table | None = None
    points: tuple[str, ...] = ()
    al: str | None = None
    al_pair: bool = False
    inline_only: bool = False  # the other AL definition's copy: no png/svg file
    #: The card's own figure (throughput vs concurrency): shown among the card's tables.
    card: bool = False


def points(table: Table) -> tuple[str, ...]:
    """Hover text per row of a table: `column: value` lines, as the table prints them."""
    return tuple(
        "\n".join(f"{c}: {v.replace('**', '')}" for c, v in zip(table.columns, row, strict=True))
        for row in table.rows
    )


def al_copies(
    table: Table,
    build: Callable[[str], Table],
    basis: Table,
    options: ReportOptions,
) -> list[tuple[Table, FigureShown]]:
    """The table's figure data, and for report.html the other AL definition's too.

    The page switches between the two; the other copy is inline only (no png/svg file),
    and only when that definition has figures (else the table falls back to the same one).
    """
    shown = str(table.data[T.AL_DEFINITION].iloc[0])
    copies = [(table, FigureShown(basis=basis, al=shown))]
    if "html" not in options.formats:
        return copies
    other = build("step_weighted" if options.al_definition == "official" else "official")
    other_shown = str(other.data[T.AL_DEFINITION].iloc[0])
    if other_shown == shown:
        return copies
    return [
        (table, FigureShown(basis=basis, al=shown, al_pair=True)),
        (other, FigureShown(basis=basis, al=other_shown, al_pair=True, inline_only=True)),
    ]
