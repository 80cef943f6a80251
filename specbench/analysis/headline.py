"""The headline: the three figures a model card leads with, as the report's tables print them.

AL overall in the card's definition (the official SPEED-Bench AL, with its n), and the
output throughput per GPU and the speedup at the card's concurrency, with their intervals
when the results have them. Every value is a display string of a table built below it
(the AL by domain table's Overall row, the serving table's throughput row): the headline
computes nothing, so it can never disagree with the tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from specbench.analysis.table import Table
from specbench.analysis.table_data import UNDER_LOADED_CONVERSATIONS
from specbench.results.columns import CONCURRENCY

#: What the card prints, said once for the headline and the page.
CARD_AL = (
    "the official SPEED-Bench AL, the figure a model card prints (the step-weighted AL of "
    "vLLM's counters, 1 + Σ accepted / Σ drafts, is labelled so wherever it appears; a card "
    "in the GQA layout prints that one, and says so)"
)


def _column(table: Table, name: str) -> int | None:
    return table.columns.index(name) if name in table.columns else None


def _al_rows(table: Table, labels: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(rows, what each rests on) for each label's Overall AL: official when it has one,
    else the step-weighted one, labelled as such."""
    rows: list[tuple[str, str]] = []
    notes: list[str] = []
    overall = table.rows[-1]
    several = len([c for c in table.columns if c.endswith("AL (official)")]) > 1
    for label in labels:
        prefix = f"{label} " if several else ""
        official = _column(table, f"{prefix}AL (official)")
        step = _column(table, f"{prefix}AL (step-weighted)")
        who = f", {label}" if several else ""
        if official is not None and overall[official].replace("**", "") not in ("n/a", ""):
            rows.append((f"AL overall{who} (official, SPEED-Bench)", overall[official]))
            notes += [
                (f"{label}: " if several else "")
                + n.removeprefix(f"{label} official: ").rstrip(".")
                for n in table.footnotes
                if n.startswith(f"{label} official:")
            ]
        elif step is not None:
            rows.append((f"AL overall{who} (step-weighted, vLLM counters)", overall[step]))
            notes.append(f"{label}: no official AL in these results, the step-weighted one shown")
    return rows, notes


def _serving_rows(table: Table) -> list[tuple[str, str]]:
    """Throughput per GPU (both sides) and its Change, from the serving table's first row."""
    metric, speculative, baseline, change = table.rows[0]
    concurrency = int(table.data[CONCURRENCY].iloc[0])
    fewest = table.data[UNDER_LOADED_CONVERSATIONS].iloc[0]
    spec_label, base_label = table.columns[1], table.columns[2]
    at = f"at concurrency {concurrency}"
    if not math.isnan(float(fewest)):  # the card's concurrency was never reached
        at += f" (under-loaded: {int(fewest)} conversations, never {concurrency} in flight)"
    return [
        (f"{metric} {at}", f"{spec_label} {speculative}; {base_label} {baseline}"),
        (f"Speedup {at}, {spec_label} vs {base_label}", change),
    ]


def headline(
    al_table: Table | None, serving_tables: Sequence[Table], labels: Sequence[str]
) -> Table:
    """The headline from the first AL by domain table and the serving tables (one per
    comparison, on the first dataset); raises ValueError when neither was built (the
    report then opens with its tables)."""
    import pandas as pd

    rows: list[tuple[str, str]] = []
    notes: list[str] = []
    if al_table is not None:
        al_rows, al_notes = _al_rows(al_table, labels)
        rows += al_rows
        notes.append(f"AL: {CARD_AL}; " + "; ".join(al_notes) + ".")
    for serving_table in serving_tables:
        rows += _serving_rows(serving_table)
    if serving_tables:
        titles = ", ".join(dict.fromkeys(f"“{t.title}”" for t in serving_tables))
        notes.append(f"Throughput and speedup: {titles} below, where the ± is said.")
    if not rows:
        raise ValueError("no AL by domain and no serving table to lead with")
    return Table(
        name="headline",
        title="Headline",
        columns=("Figure", "Value"),
        rows=tuple(rows),
        data=pd.DataFrame([{"figure": f, "value": v.replace("**", "")} for f, v in rows]),
        align=("left", "right"),
        footnotes=tuple(notes),
    )
