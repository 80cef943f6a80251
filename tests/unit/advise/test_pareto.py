"""The Pareto frontier from a hand-built points frame: dominated points drop out, a tie on
both axes keeps both points, the table's rows and footnotes, and the figure's hover targets."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from specbench.advise.pareto import (
    ON_FRONTIER,
    TIED_WITH,
    frontier_flags,
    hover_texts,
    pareto_frontier,
    pareto_points,
)
from specbench.analysis.tables import TableUnavailable
from specbench.render.plots import svg_text, throughput_vs_interactivity

# (config, baseline?, concurrency, interactivity tok/s/user, tok/s/GPU)
POINTS = (
    ("baseline", True, 1, 100.0, 50.0),  # beaten by eagle3-k2 c=1 (150, 70)
    ("baseline", True, 4, 80.0, 150.0),  # beaten by eagle3-k2 c=4 (120, 200)
    ("eagle3-k2", False, 1, 150.0, 70.0),  # ties eagle3-k3 c=1
    ("eagle3-k2", False, 4, 120.0, 200.0),
    ("eagle3-k2", False, 16, 60.0, 300.0),
    ("eagle3-k3", False, 1, 150.0, 70.0),
    ("eagle3-k3", False, 4, 90.0, 190.0),  # beaten by eagle3-k2 c=4
)


def points_frame(rows=POINTS, view: str = "chat") -> pd.DataFrame:
    """A `summary_mean`-shaped frame: one row per config × concurrency, with intervals on
    eagle3-k2 c=16 only (Student t over launches)."""
    records = []
    for label, baseline, c, x, y in rows:
        record = {
            "label": label,
            "is_baseline": baseline,
            "view": view,
            "workload": view,
            "category": None,
            "concurrency": c,
            "output_tok_s_per_gpu": y,
            "output_tok_s": y * 8,
            "interactivity_tok_s_per_user": x,
        }
        if (label, c) == ("eagle3-k2", 16):
            record |= {
                "output_tok_s_per_gpu_ci_low": 290.0,
                "output_tok_s_per_gpu_ci_high": 310.0,
                "output_tok_s_per_gpu_ci_kind": "launches",
            }
        records.append(record)
    return pd.DataFrame(records)


def test_a_point_is_on_the_frontier_unless_another_beats_it_on_both_axes() -> None:
    assert frontier_flags([(1.0, 5.0), (2.0, 4.0), (1.0, 4.0), (2.0, 4.0)]) == [
        True,
        True,
        False,  # (1, 4) is beaten by (1, 5): equal on one axis, higher on the other
        True,  # equal to (2, 4): neither beats the other
    ]


def test_pareto_points_flags_the_dominated_points_and_names_the_tie() -> None:
    every = pareto_points(points_frame())
    flags = {(r["label"], r["concurrency"]): r[ON_FRONTIER] for _, r in every.iterrows()}
    assert flags == {
        ("baseline", 1): False,
        ("baseline", 4): False,
        ("eagle3-k2", 1): True,
        ("eagle3-k2", 4): True,
        ("eagle3-k2", 16): True,
        ("eagle3-k3", 1): True,
        ("eagle3-k3", 4): False,
    }
    ties = {(r["label"], r["concurrency"]): r[TIED_WITH] for _, r in every.iterrows()}
    assert ties[("eagle3-k2", 1)] == "eagle3-k3 c=1"
    assert ties[("eagle3-k3", 1)] == "eagle3-k2 c=1"
    assert ties[("eagle3-k2", 4)] == ""
    assert set(every["throughput_metric"]) == {"output_tok_s_per_gpu"}


def test_the_frontier_table_lists_its_points_highest_throughput_first() -> None:
    table = pareto_frontier(points_frame(), "chat")
    assert table.name == "pareto_frontier"
    assert table.title.startswith("Throughput against interactivity (Pareto frontier)")
    assert table.columns == ("Config", "Concurrency", "tok/s/GPU", "tok/s/user")
    assert table.rows == (
        ("eagle3-k2", "16", "300.0 (290.0–310.0)", "60.0"),
        ("eagle3-k2", "4", "200.0", "120.0"),
        ("eagle3-k2", "1", "70.0", "150.0"),
        ("eagle3-k3", "1", "70.0", "150.0"),
    )
    notes = " ".join(table.footnotes)
    assert "4 of 7 points of 3 configs" in notes
    assert "Tied (equal on both axes; neither beats the other, so both are kept): " in notes
    assert "eagle3-k2 c=1 = eagle3-k3 c=1." in notes
    assert "Beaten at every concurrency: baseline." in notes
    assert "(Student t over launch values)" in notes
    assert list(table.data["label"]) == ["eagle3-k2", "eagle3-k2", "eagle3-k2", "eagle3-k3"]


def test_per_server_throughput_when_a_config_does_not_know_its_gpus() -> None:
    frame = points_frame()
    frame.loc[frame["label"] == "baseline", "output_tok_s_per_gpu"] = math.nan
    table = pareto_frontier(frame, "chat")
    assert table.columns[2] == "tok/s"
    assert table.rows[0] == ("eagle3-k2", "16", "2,400.0", "60.0")  # 300 tok/s/GPU × 8
    assert any("per server" in note for note in table.footnotes)


def test_one_config_has_no_frontier_to_choose_from() -> None:
    one = points_frame(tuple(p for p in POINTS if p[0] == "eagle3-k2"))
    with pytest.raises(TableUnavailable, match=r"one config \(eagle3-k2\)"):
        pareto_frontier(one, "chat")


def test_the_figure_has_one_hover_target_per_point_and_the_frontier_line() -> None:
    every = pareto_points(points_frame())
    texts = hover_texts(every)
    assert len(texts) == 7
    assert texts[4] == (
        "Config: eagle3-k2\nConcurrency: 16\ntok/s/GPU: 300.0 (290.0–310.0)\n"
        "tok/s/user: 60.0\non the frontier"
    )
    assert texts[0].endswith("beaten by another point")
    svg = svg_text(throughput_vs_interactivity(every, "Pareto", "chat"), salt="t")
    for row in range(7):
        assert f'id="point-{row}-chat"' in svg
    assert 'id="point-7-chat"' not in svg
    assert 'id="chat-frontier"' in svg
    for label in ("c=16", "c=4", "c=1", "eagle3-k3", "Pareto frontier"):
        assert label in svg
