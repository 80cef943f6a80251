"""Launch-level intervals of each point (`analysis.intervals`) and `--variance-from`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from analysis_fixtures import write_campaign, write_three_launches

from specbench.analysis import intervals as I
from specbench.analysis.table import Table
from specbench.common.errors import SpecbenchError
from specbench.results import frame as F

TOK = "output_tok_s_per_gpu"
#: t(0.975, 2) and z(0.975).
T2 = 4.302652729749752
Z = 1.959963984540054


def _row(table: pd.DataFrame, label: str) -> pd.Series:
    return table[table["label"] == label].iloc[0]


def test_three_launches_read_from_their_folders_give_student_t_intervals(
    tmp_path: Path,
) -> None:
    results = write_three_launches(tmp_path / "three")
    assert (results / "baseline" / "speed-bench-qualitative" / "c4" / "l2" / "r1").is_dir()
    frame = F.load_results([results])
    assert sorted(frame["launch"].unique()) == [0, 1, 2]
    table = I.summary_mean(frame)
    assert len(table) == 2  # one row per config × workload × concurrency, as before
    base, spec = _row(table, "baseline"), _row(table, "eagle3")
    assert base["launches"] == 3
    # Launch values 100, 102, 101: mean 101, s = 1, half-width t(0.975, 2)/√3.
    assert base[TOK] == pytest.approx(101.0)
    assert base[f"{TOK}_ci_kind"] == "launches"
    assert base[f"{TOK}_between_launch_sd"] == pytest.approx(1.0)
    assert base[f"{TOK}_ci_low"] == pytest.approx(101.0 - T2 / math.sqrt(3))
    assert base[f"{TOK}_ci_high"] == pytest.approx(101.0 + 2.484138, abs=1e-6)
    # Each launch: two repeats with se 1 and spread 0.707: max(√2/2, 0.707/√2) = √2/2;
    # over three launches √(3 × 0.5)/3.
    assert base[f"{TOK}_within_launch_se"] == pytest.approx(math.sqrt(1.5) / 3)
    # eagle3: 150, 156, 153: s = 3.
    assert spec[f"{TOK}_ci_high"] == pytest.approx(153.0 + T2 * 3 / math.sqrt(3))
    # The older repeat interval (every repeat pooled) is still there, and far narrower.
    assert base[f"{TOK}_ci95"] < base[f"{TOK}_ci_high"] - base[TOK]
    # Median TTFT 100, 101, 102 by launch; AL only on the speculative side.
    assert base["ttft_ms_median_ci_high"] == pytest.approx(101.0 + T2 / math.sqrt(3))
    assert spec["acceptance_length_ci_kind"] == "launches"
    assert pd.isna(base["acceptance_length_ci_kind"])


def test_one_launch_is_labelled_and_uses_the_stored_errors(tmp_path: Path) -> None:
    frame = F.load_results([write_three_launches(tmp_path / "one", launches=1)])
    base = _row(I.summary_mean(frame), "baseline")
    assert base["launches"] == 1
    assert base[f"{TOK}_ci_kind"] == "one-launch"
    assert pd.isna(base[f"{TOK}_between_launch_sd"])
    # Repeats 99.5 and 100.5 with se 1 each: √2/2; z × √2/2 either side of 100.
    assert base[f"{TOK}_ci_low"] == pytest.approx(100.0 - Z * math.sqrt(0.5))


def test_variance_from_an_earlier_campaign_widens_one_launch(tmp_path: Path) -> None:
    earlier = write_three_launches(tmp_path / "earlier")
    current = write_three_launches(tmp_path / "current", launches=1)
    calibration = I.load_calibration(earlier, [current])
    # Launch values 100, 102, 101 with within-launch se² 0.5: τ² = 1 − 0.5; τ/x̄ = √0.5/101.
    cv = math.sqrt(0.5) / 101
    assert calibration.cv(TOK, "baseline", 4) == pytest.approx(cv)
    assert calibration.cv(TOK, "baseline", 64) == pytest.approx(calibration.by_figure[TOK])
    base = _row(I.summary_mean(F.load_results([current]), calibration), "baseline")
    assert base[f"{TOK}_ci_kind"] == "calibrated"
    se = math.sqrt(0.5 + (cv * 100.0) ** 2)
    assert base[f"{TOK}_ci_high"] == pytest.approx(100.0 + Z * se)


def test_results_from_before_launches_keep_their_rows_and_columns(tmp_path: Path) -> None:
    frame = F.load_results([write_campaign(tmp_path / "old")])
    from specbench.analysis.aggregate import aggregate_repeats

    before = aggregate_repeats(frame)
    after = I.summary_mean(frame)
    assert list(after.columns[: len(before.columns)]) == list(before.columns)
    pd.testing.assert_frame_equal(after[before.columns], before)
    assert set(after["launches"]) == {1}
    # No stored errors: two repeats give the spread's interval, one repeat none.
    kinds = after[f"{TOK}_ci_kind"]
    assert set(kinds) == {"one-launch"}
    two = after[after[f"{TOK}_n"] == 2].iloc[0]
    assert not pd.isna(two[f"{TOK}_ci_low"])
    single = after[after[f"{TOK}_n"] == 1].iloc[0]
    assert pd.isna(single[f"{TOK}_ci_low"])


def test_a_repeat_error_falls_back_to_its_precision_interval() -> None:
    precision = {"figures": {TOK: {"value": 100.0, "ci_low": 98.0, "ci_high": 102.0}}}
    row = pd.Series({TOK: 100.0, "standard_errors": None, "precision": json.dumps(precision)})
    assert I.repeat_error(row, TOK) == pytest.approx(2.0 / Z)
    assert I.repeat_error(row, "ttft_ms_median") is None


def test_a_derived_figure_s_error_is_propagated_from_its_source() -> None:
    # interactivity = 1000 / median TPOT: at 20 ms, d/dx = 1000/400 = 2.5 per ms.
    errors = {"figures": {"tpot_ms_median": 0.4}}
    row = pd.Series({"tpot_ms_median": 20.0, "standard_errors": json.dumps(errors)})
    assert I.repeat_error(row, "interactivity_tok_s_per_user") == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing", "no such directory"),
        ("not_results", "not a specbench results directory"),
        ("other_suite", "suite 'other-suite', not the suite of"),
        ("other_model", "target model other-model, not the one of"),
        ("two_launches", "2 launches per point; at least 3"),
    ],
)
def test_variance_from_refuses_what_cannot_calibrate(
    tmp_path: Path, case: str, message: str
) -> None:
    current = write_three_launches(tmp_path / "current", launches=1)
    earlier = tmp_path / "earlier"
    if case == "not_results":
        earlier.mkdir()
    elif case == "other_suite":
        write_three_launches(earlier, suite="other-suite")
    elif case == "other_model":
        write_three_launches(earlier, model="other-model")
    elif case == "two_launches":
        write_three_launches(earlier, launches=2)
    with pytest.raises(SpecbenchError) as raised:
        I.load_calibration(earlier, [current])
    text = str(raised.value)
    assert text.startswith(f"--variance-from {earlier}: ")
    assert message in text
    assert "\n" not in text


def _serving(results: Path, calibration: I.Calibration | None = None) -> Table:
    from specbench.analysis.tables import serving
    from specbench.results.selection import Comparison

    frame = F.load_results([results])
    view = str(frame["view"].iloc[0])
    return serving(frame, Comparison("eagle3", "baseline"), view, 4, calibration)


def test_the_serving_table_shows_launch_intervals_and_the_ratio_s(tmp_path: Path) -> None:
    table = _serving(write_three_launches(tmp_path / "three"))
    # eagle3 153 ± 4.3027·3/√3 = 7.45; baseline 101 ± 2.48. Ratio 153/101 = 1.5149 with its
    # delta-method interval 1.5149 ± 0.0616 (stats test: Welch df 2.958).
    assert table.rows[0] == (
        "Output throughput/GPU",
        "153.0 ± 7.5 tok/s",
        "101.0 ± 2.5 tok/s",
        "1.51× (1.45–1.58)",
    )
    assert table.rows[2][1] == "101 ± 2.48 ms"  # median TTFT: launches 100, 101, 102
    assert any(n.startswith("± 95% interval over 3 launches") for n in table.footnotes)
    # The counts name the launches, and a side's range is over its 6 cells with no second,
    # pooled "CI" (it would treat the cells of one launch as independent of each other).
    assert table.footnotes[0] == (
        "Means over cells (eagle3: 6 on 3 launches, baseline: 6 on 3 launches); Change uses "
        "unrounded values."
    )
    assert "eagle3 throughput/GPU over its 6 cells: 149.5–156.5 tok/s." in table.footnotes
    assert not any("95% CI" in note for note in table.footnotes)
    ratio = table.data.set_index("metric").loc[TOK]
    assert ratio["ratio_ci_low"] == pytest.approx(
        153 / 101 * math.exp(-0.0616373 / (153 / 101)), abs=1e-6
    )


def test_one_launch_keeps_the_card_cells_and_says_why_in_a_footnote(tmp_path: Path) -> None:
    table = _serving(write_three_launches(tmp_path / "one", launches=1))
    assert table.rows[0] == ("Output throughput/GPU", "150.0 tok/s", "100.0 tok/s", "1.50×")
    assert (
        "One launch: between-launch variance not measured; within-launch 95% interval of "
        "tok/s/GPU: eagle3 ±1.4, baseline ±1.4." in table.footnotes
    )
    # One launch reads as before launches: means over repeats and their spread.
    assert table.footnotes[0] == (
        "Means over repeats (eagle3: 2, baseline: 2); Change uses unrounded values."
    )
    assert "eagle3 throughput/GPU over repeats: 149.5–150.5 tok/s (95% CI ±6.4)." in (
        table.footnotes
    )


def test_a_calibrated_table_says_so(tmp_path: Path) -> None:
    earlier = write_three_launches(tmp_path / "earlier")
    current = write_three_launches(tmp_path / "current", launches=1)
    table = _serving(current, I.load_calibration(earlier, [current]))
    # baseline: √(0.5 + (100·√0.5/101)²) × 1.96 = 1.95
    assert table.rows[0][2] == "100.0 ± 2.0 tok/s"
    assert any("widened by the between-launch variance" in n for n in table.footnotes)


def test_the_concurrency_sweep_shows_launch_intervals_and_says_what_it_averaged(
    tmp_path: Path,
) -> None:
    from specbench.analysis.tables import concurrency_sweep
    from specbench.results.selection import Comparison

    frame = F.load_results([write_three_launches(tmp_path / "three", concurrencies=(1, 4))])
    view = str(frame["view"].iloc[0])
    table = concurrency_sweep(frame, Comparison("eagle3", "baseline"), view)
    # The same launch values at each c as the serving table's: 153 ± 7.45, 101 ± 2.48.
    assert table.rows == (
        ("1", "153.0 ± 7.5", "101.0 ± 2.5", "1.51× (1.45–1.58)"),
        ("4", "153.0 ± 7.5", "101.0 ± 2.5", "1.51× (1.45–1.58)"),
    )
    assert table.footnotes[0] == "Means over cells; speedups from unrounded values."
    assert table.footnotes[1].startswith(
        "± 95% interval over 3 launches (Student t over launch values); a ratio's range in "
        "Speedup: its 95% interval"
    )


def test_a_one_launch_sweep_keeps_the_card_cells(tmp_path: Path) -> None:
    from specbench.analysis.tables import concurrency_sweep
    from specbench.results.selection import Comparison

    frame = F.load_results([write_three_launches(tmp_path / "one", launches=1)])
    view = str(frame["view"].iloc[0])
    table = concurrency_sweep(frame, Comparison("eagle3", "baseline"), view)
    assert table.rows == (("4", "150.0", "100.0", "1.50×"),)
    assert table.footnotes == ("Means over repeats; speedups from unrounded values.",)
