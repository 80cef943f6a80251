"""The cells a figure rests on: one row per cell, what was measured and how it stopped.

For the HTML report's "cells behind this figure": conversations measured out of those
available, repeats, the stopping rule and the achieved precision (the widest relative
half-width of the cell's bootstrap intervals), requests and failures. Read only from the
tidy frame (`results.frame`); a cell written before a figure existed shows `n/a`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from specbench.analysis import wording as W
from specbench.analysis.table import Table
from specbench.results.columns import (
    CONCURRENCY,
    LABEL,
    NUM_CONVERSATIONS,
    NUM_FAILED,
    NUM_REQUESTS,
    REPEAT,
    VIEW,
)

if TYPE_CHECKING:
    import pandas as pd

PRECISION = "precision"  # the summary's nested record, as JSON text (results.frame)
STOPPING_RULE = "stopping_rule"
CONVERSATIONS_AVAILABLE = "conversations_available"
WORST_HALF_WIDTH = "worst_relative_half_width"


def _precision(text: Any) -> dict[str, Any]:
    if not isinstance(text, str) or not text:
        return {}
    record = json.loads(text)
    return record if isinstance(record, dict) else {}


def _worst(record: dict[str, Any]) -> float | None:
    widths = [f.get("relative_half_width") for f in record.get("figures", {}).values()]
    known = [float(w) for w in widths if isinstance(w, int | float)]
    return max(known) if known else None


def figure_cells(frame: pd.DataFrame, labels: Sequence[str]) -> Table:
    """The cells of `labels` in `frame` (the rows a figure drew from), in table order."""
    cells = frame[frame[LABEL].isin(labels)]
    cells = cells.sort_values([LABEL, VIEW, CONCURRENCY, REPEAT]).reset_index(drop=True)
    data = cells.reindex(
        columns=[LABEL, VIEW, CONCURRENCY, REPEAT, NUM_CONVERSATIONS, NUM_REQUESTS, NUM_FAILED]
    )
    records = [_precision(text) for text in cells.get(PRECISION, [None] * len(cells))]
    data[STOPPING_RULE] = [r.get(STOPPING_RULE) for r in records]
    data[CONVERSATIONS_AVAILABLE] = [r.get(CONVERSATIONS_AVAILABLE) for r in records]
    worsts = [_worst(r) for r in records]
    data[WORST_HALF_WIDTH] = worsts
    # The precision fields come from the records, not from `data`: a column where some
    # cells have a value and some None reads NaN back from pandas (a report over a
    # precision directory and a plain one).
    rows = []
    for row, record, worst in zip(data.to_dict(orient="records"), records, worsts, strict=True):
        conversations = row[NUM_CONVERSATIONS]
        available = record.get(CONVERSATIONS_AVAILABLE)
        shown = (
            "n/a"
            if conversations is None or conversations != conversations
            else (str(int(conversations)))
        )
        if available is not None:
            shown += f" of {int(available)}"
        rows.append(
            (
                str(row[LABEL]),
                str(row[VIEW]),
                str(int(row[CONCURRENCY])),
                str(int(row[REPEAT])),
                shown,
                str(int(row[NUM_REQUESTS])),
                str(int(row[NUM_FAILED])),
                str(record.get(STOPPING_RULE) or "n/a"),
                f"±{W.percent(worst, 1)}" if worst is not None else "n/a",
            )
        )
    return Table(
        name="cells",
        title="Cells behind this figure",
        columns=(
            "Config",
            "Dataset",
            "c",
            "Repeat",
            "Conversations",
            "Requests",
            "Failed",
            "Stopping rule",
            "Precision",
        ),
        rows=tuple(rows),
        data=data,
        align=("left", "left", *(("right",) * 5), "left", "right"),
        footnotes=(
            "Precision: the widest 95% bootstrap half-width of the cell's figures, relative "
            "to the figure (resampling conversations); n/a: the cell ran every conversation "
            "without a precision target, or was written before specbench recorded it.",
        ),
    )
