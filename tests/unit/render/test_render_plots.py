"""Figures: each renders a non-empty PNG and carries the expected series, scales and labels."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from analysis_fixtures import QUALITATIVE, write_campaign
from matplotlib.figure import Figure

from specbench.analysis import table_data as D
from specbench.render import plots as P
from specbench.results import columns as C
from specbench.results import frame as F
from specbench.results import loading as L
from specbench.results.selection import Comparison

EAGLE = Comparison(speculative="eagle3", baseline="baseline")


@pytest.fixture
def loaded(tmp_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    cells, _ = L.load_cells([write_campaign(tmp_path / "campaign")])
    return F.cells_frame(cells), F.category_frame(cells)


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    data = buffer.getvalue()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 10_000  # a drawn chart, not an empty canvas
    return data


def _texts(figure: Figure) -> list[str]:
    return [t.get_text() for t in figure.axes[0].texts]


def _is_log2(axis: object) -> bool:
    transform = axis.get_transform()  # type: ignore[attr-defined]
    return axis.get_scale() == "log" and getattr(transform, "base", None) == 2  # type: ignore[attr-defined]


def test_throughput_vs_concurrency(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, _ = loaded
    figure = P.throughput_vs_concurrency(
        D.sweep_data(frame, EAGLE, QUALITATIVE), "eagle3", "baseline", "Throughput"
    )
    _png(figure)
    axes = figure.axes[0]
    labels = [line.get_label() for line in axes.get_lines()]
    assert [label for label in labels if not label.startswith("_")] == ["eagle3", "baseline"]
    # One hover target per measured point, named for report.html: point-<sweep row>-<side>.
    gids = sorted(str(line.get_gid()) for line in axes.get_lines() if line.get_gid())
    rows = len(D.sweep_data(frame, EAGLE, QUALITATIVE))
    assert gids == sorted(
        f"point-{i}-{side}" for i in range(rows) for side in ("baseline", "speculative")
    )
    speculative, baseline = axes.get_lines()[:2]
    assert list(speculative.get_xdata()) == [1, 2, 48]
    assert list(speculative.get_ydata()) == pytest.approx([29.0, 55.0, 415.2])
    assert list(baseline.get_ydata()) == pytest.approx([16.0, 32.0, 281.7])
    assert _is_log2(axes.xaxis)
    assert axes.get_xlabel().startswith("Concurrency")
    assert "tok/s" in axes.get_ylabel()
    # Rounded values, speedup from the unrounded means (415.2 / 281.7 = 1.474).
    assert "415\n1.47×" in _texts(figure)
    assert "29\n1.81×" in _texts(figure)
    assert "282" in _texts(figure)
    assert axes.get_legend() is not None


def test_throughput_labels_stay_apart_where_the_lines_cross() -> None:
    # At c=4 speculation is slower: its label must go below its point, the baseline's above.
    sweep = pd.DataFrame(
        {
            C.CONCURRENCY: [1, 4],
            D.SPECULATIVE: [504.0, 806.0],
            D.BASELINE: [306.0, 956.0],
            D.RATIO: [504.0 / 306.0, 806.0 / 956.0],
        }
    )
    figure = P.throughput_vs_concurrency(sweep, "ngram", "baseline", "Throughput")
    offsets = {t.get_text(): t.xyann[1] for t in figure.axes[0].texts}  # type: ignore[attr-defined]
    assert offsets["504\n1.65×"] > 0 and offsets["306"] < 0
    assert offsets["806\n0.84×"] < 0 and offsets["956"] > 0


def test_al_by_domain_figure(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, categories = loaded
    figure = P.al_by_domain(
        D.domain_data(frame, categories, QUALITATIVE, ["eagle3"]), ["eagle3"], "AL by domain"
    )
    _png(figure)
    axes = figure.axes[0]
    bars = axes.patches
    assert len(bars) == 11
    labels = [t.get_text() for t in axes.get_yticklabels()]
    assert labels[-1] == "Coding" and labels[0] == "Roleplay"  # highest on top
    assert max(b.get_width() for b in bars) == pytest.approx(1 + 420 / 180)
    (overall,) = axes.get_lines()
    assert list(overall.get_xdata()) == pytest.approx([2.81, 2.81])
    assert overall.get_label() == "Overall 2.81"
    assert "3.33" in _texts(figure)
    assert axes.get_xlabel().startswith("Acceptance length")


def test_per_position_figure(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, _ = loaded
    figure = P.per_position_acceptance(D.acceptance_summary_data(frame, ["eagle3"]), "Positions")
    _png(figure)
    axes = figure.axes[0]
    lines = {line.get_label(): line for line in axes.get_lines()}
    assert set(lines) == {
        "SPEED-Bench (qualitative)",
        "SPEED-Bench (throughput_1k)",
        "SPEED-Bench (throughput_8k)",
    }
    assert list(lines["SPEED-Bench (throughput_8k)"].get_ydata()) == pytest.approx(
        [0.75, 0.55, 0.42]
    )
    assert list(lines["SPEED-Bench (qualitative)"].get_xdata()) == [1, 2, 3]
    assert axes.get_ylim()[1] == pytest.approx(1.02)


def test_al_vs_context_figure(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, _ = loaded
    figure = P.al_vs_context(D.context_data(frame, ["eagle3"]), ["eagle3"], "AL vs context")
    _png(figure)
    axes = figure.axes[0]
    (line,) = axes.get_lines()
    assert list(line.get_xdata()) == [1, 8]
    assert list(line.get_ydata()) == pytest.approx([2.71, 2.72])
    assert _is_log2(axes.xaxis)
    assert [t.get_text() for t in axes.get_xticklabels()] == ["1K", "8K"]


def test_save_figure_writes_png_and_svg(
    loaded: tuple[pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    frame, _ = loaded
    figure = P.al_vs_context(D.context_data(frame, ["eagle3"]), ["eagle3"], "AL vs context")
    paths = P.save_figure(figure, tmp_path / "ctx", ["png", "svg"])
    assert [p.name for p in paths] == ["ctx.png", "ctx.svg"]
    assert paths[0].read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in paths[1].read_text()[:500]


def test_a_long_title_wraps_inside_the_figure(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    # The title `specbench report` gives this figure was cut off at "…official AL (SPEED-Bench".
    frame, categories = loaded
    title = "Acceptance length by domain (SPEED-Bench qualitative), official AL (SPEED-Bench)"
    figure = P.al_by_domain(
        D.domain_data(frame, categories, QUALITATIVE, ["eagle3"]), ["eagle3"], title
    )
    figure.draw_without_rendering()  # lays the figure out as saving does
    shown = figure.axes[0].title
    assert shown.get_text().replace("\n", " ") == title
    box = shown.get_window_extent()
    assert box.x0 >= 0 and box.x1 <= figure.bbox.width
    assert box.y1 <= figure.bbox.height


def test_a_single_output_position_bin_is_drawn_as_bars() -> None:
    data = pd.DataFrame(
        {
            "label": ["eagle3", "ngram"],
            "workload": ["qual", "qual"],
            "start_token": [0, 0],
            "end_token": [128, 128],
            "acceptance_length": [2.61, 1.74],
        }
    )
    figure = P.al_by_position(data, "AL by output position")
    _png(figure)
    axes = figure.axes[0]
    assert axes.get_lines() == []  # no one-point line on an axis spanning a few tokens
    assert [round(bar.get_height(), 2) for bar in axes.patches] == [2.61, 1.74]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["eagle3", "ngram"]
    assert "tokens 0–128" in axes.get_xlabel()
    two_bins = pd.concat([data, data.assign(start_token=128, end_token=256)])
    lines = P.al_by_position(two_bins, "AL by output position").axes[0].get_lines()
    assert [list(line.get_xdata()) for line in lines] == [[64.0, 192.0], [64.0, 192.0]]


def test_svg_text_is_an_inline_svg_with_text_kept_as_text(
    loaded: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    frame, _ = loaded
    sweep = D.sweep_data(frame, EAGLE, QUALITATIVE)
    svg = P.svg_text(P.throughput_vs_concurrency(sweep, "eagle3", "baseline", "Sweep"), "a")
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "<text" in svg and ">Sweep<" in svg  # text, not glyph paths
    assert 'width="' not in svg.split(">", 1)[0]  # scales with the page
    assert 'id="point-0-speculative--a"' in svg
    other = P.svg_text(P.throughput_vs_concurrency(sweep, "eagle3", "baseline", "Sweep"), "b")
    # Two figures of one function on one page share none of our ids (a K sweep's pairs).
    ours = {part.split('"')[0] for part in svg.split(' id="point-')[1:]}
    theirs = {part.split('"')[0] for part in other.split(' id="point-')[1:]}
    assert ours and not ours & theirs
    clips = {part.split('"')[0] for part in svg.split('clipPath id="')[1:]}
    assert clips and not clips & {part.split('"')[0] for part in other.split('clipPath id="')[1:]}
