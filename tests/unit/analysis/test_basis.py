"""The "cells behind this figure" table, from the tidy frame."""

from __future__ import annotations

import json

import pandas as pd

from specbench.analysis.basis import figure_cells


def cell(label: str, repeat: int, precision: dict | None) -> dict:
    return {
        "label": label,
        "view": "qualitative",
        "concurrency": 4,
        "repeat": repeat,
        "num_conversations": 80,
        "num_requests": 160,
        "num_failed": 0,
        "precision": json.dumps(precision) if precision is not None else None,
    }


def test_cells_with_and_without_a_precision_record_in_one_report() -> None:
    # A report over a precision campaign and a plain run: pandas reads the missing
    # precision fields of the plain cell as NaN in a column of numbers.
    precise = {
        "stopping_rule": "precision reached",
        "conversations_available": 880,
        "figures": {"ttft_ms_median": {"relative_half_width": 0.0175}},
    }
    frame = pd.DataFrame([cell("eagle3", 0, precise), cell("ngram", 0, None)])
    table = figure_cells(frame, ["eagle3", "ngram"])
    assert table.rows == (
        ("eagle3", "qualitative", "4", "0", "80 of 880", "160", "0", "precision reached", "±1.8%"),
        ("ngram", "qualitative", "4", "0", "80", "160", "0", "n/a", "n/a"),
    )
