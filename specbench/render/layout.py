"""The order report.md and report.html print in: the card first, then everything else.

A reader opens the report to see what a model card would print, so both renderers place,
in order: the lead (what was measured, and the headline), the card's tables in the card's
order (AL by domain, AL by context, serving at the card's concurrency, the throughput
sweep) with the card's own figure before its table, then the other figures, then the other
tables each followed by its figures. Which section a table came from is recorded when it
is built (`ReportOutcome.section_of`); nothing here builds or formats a number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from specbench.analysis.table import Table

#: Sections whose tables a model card prints, in the card's order (`render.sections`).
CARD_SECTIONS = ("al_by_domain", "al_by_context", "serving")
#: The section of the report's own lead tables (`card_header`, `headline`).
LEAD_SECTION = "lead"


class Placed(Protocol):
    """A figure as the layout needs it: the table it was drawn from, and whether it is the
    card's own figure."""

    @property
    def table(self) -> str | None: ...

    @property
    def card(self) -> bool: ...


F = TypeVar("F", bound=Placed)


@dataclass(slots=True)
class Layout(Generic[F]):
    """The report's parts, in print order; each a list of tables and figures."""

    lead: list[Table] = field(default_factory=list)
    card: list[Table | F] = field(default_factory=list)
    figures: list[F] = field(default_factory=list)
    details: list[Table | F] = field(default_factory=list)


def arrange(tables: Sequence[Table], figures: Sequence[F], section_of: dict[str, str]) -> Layout[F]:
    """Place every table and figure once (see the module's docstring)."""
    placed: Layout[F] = Layout()
    drawn = {t.name for t in tables}
    for table in tables:
        section = section_of.get(table.name)
        own = [f for f in figures if f.table == table.name]
        if section == LEAD_SECTION:
            placed.lead.append(table)
            placed.figures += own
        elif section in CARD_SECTIONS:
            placed.card += [f for f in own if f.card]
            placed.card.append(table)
            placed.figures += [f for f in own if not f.card]
        else:
            placed.details += [table, *own]
    placed.figures += [f for f in figures if f.table not in drawn]
    return placed
