"""The report's "Precision over launches" table, from the manifest's record of each point."""

from __future__ import annotations

from pathlib import Path

from analysis_fixtures import QUALITATIVE, summary, write_launch_cell

from specbench.analysis.cost_report import launch_lines, report_section
from specbench.store.manifest import PrecisionPoint
from specbench.store.summary import CellPrecision, FigurePrecision


def point(server: str, used: int, stopped: str | None, tok_s: float | None) -> PrecisionPoint:
    return PrecisionPoint(
        server=server,
        workload="qualitative",
        concurrency=4,
        target=0.02,
        launches_used=used,
        max_launches=6,
        half_widths={
            "output_tok_s_per_gpu": tok_s,
            "e2e_ms_median": 0.004,
            "ttft_ms_median": 0.011,
            "interactivity_tok_s_per_user": 0.0,
        },
        stopped=stopped,  # type: ignore[arg-type]
    )


def test_each_point_says_its_launches_widths_and_why_it_stopped() -> None:
    lines = launch_lines(
        [
            point("eagle3", 6, "cap reached", 0.0312),
            point("baseline", 3, "precision reached", 0.0124),
            point("ngram", 4, None, None),
        ]
    )
    assert lines[0] == "### Precision over launches"
    assert lines[4] == (
        "| server | workload | c | launches | target | stopped | ± tok/s/GPU | ± E2E p50 | "
        "± TTFT p50 | ± interactivity |"
    )
    assert lines[6:9] == [
        "| baseline | qualitative | 4 | 3/6 | 2.00% | precision reached | ±1.2% | ±0.4% | "
        "±1.1% | ±0.0% |",
        "| eagle3 | qualitative | 4 | 6/6 | 2.00% | cap reached | ±3.1% | ±0.4% | ±1.1% | ±0.0% |",
        "| ngram | qualitative | 4 | 4/6 | 2.00% | not finished (rerun to continue) | – | ±0.4% "
        "| ±1.1% | ±0.0% |",
    ]
    assert lines[-1].startswith(
        "**1 of 3 points: cap reached without the precision** (eagle3/qualitative/c4)"
    )


def test_results_without_the_record_have_no_table() -> None:
    assert launch_lines(None) == []
    assert launch_lines([]) == []


def test_a_point_whose_launches_disagree_is_flagged_as_a_regime() -> None:
    flagged = point("eagle3", 3, "precision reached", 0.012).model_copy(
        update={"regimes": ["ttft_ms_median", "e2e_ms_median"]}
    )
    lines = launch_lines([flagged, point("baseline", 3, "precision reached", 0.01)])
    assert lines[-1].startswith(
        "**Launches disagree beyond their intervals (a regime)**: eagle3/qualitative/c4 on "
        "TTFT p50, E2E p50. Two launches' within-launch 95% intervals do not overlap"
    )
    assert not any("cap reached without" in line for line in lines)


def test_each_cell_row_names_its_launch_and_repeat(tmp_path: Path) -> None:
    # Two launches of one point: without the launch column their rows read as duplicates.
    for launch, width in ((0, 0.031), (1, 0.018)):
        precision = CellPrecision(
            target=0.02,
            min_conversations=16,
            stopping_rule="precision_reached" if width < 0.02 else "all_conversations",
            conversations_used=48 if width < 0.02 else 64,
            conversations_available=64,
            figures={
                "output_tok_s_per_gpu": FigurePrecision(
                    value=150.0, ci_low=150 * (1 - width), ci_high=150 * (1 + width),
                    relative_half_width=width,
                )
            },
            bootstrap_resamples=400,
            seed=0,
        )  # fmt: skip
        cell = summary(label="eagle3", dataset=QUALITATIVE, concurrency=4, launch=launch,
                       precision=precision, throughput_window="steady_state")  # fmt: skip
        write_launch_cell(tmp_path, cell)
    lines = (report_section(tmp_path) or "").splitlines()
    header = next(line for line in lines if line.startswith("| server"))
    assert header.startswith("| server | workload | c | launch | repeat | conversations |")
    rows = [line for line in lines if line.startswith("| eagle3")]
    assert rows == [
        "| eagle3 | speed-bench-qualitative | 4 | 0 | 0 | 64/64 | 2% | all_conversations | "
        "steady_state | ±3.1% | – | – | – |",
        "| eagle3 | speed-bench-qualitative | 4 | 1 | 0 | 48/64 | 2% | precision_reached | "
        "steady_state | ±1.8% | – | – | – |",
    ]
