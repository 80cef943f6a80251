"""The gate's significance test: its Bonferroni family, its power and the fallbacks, on known
values (the test's formulas alone: tests/unit/stats/test_significance.py)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from gate_fixtures import spec_decode, summary, write_cell, write_manifest

from specbench.gate.baseline import Baseline, build_baseline, server_summaries, suite_identity
from specbench.gate.baseline_power import baseline_power, baseline_warnings
from specbench.gate.compare import GateReport, compare, judge
from specbench.gate.rules import GateRules, MetricRule
from specbench.gate.snapshot import MetricStats, snapshot
from specbench.results.loading import read_manifest
from specbench.stats.power import detectable_worsening
from specbench.store.summary import CellErrors

AL = MetricRule(direction="higher", relative=0.02)
TTFT = MetricRule(direction="lower", relative=0.10)


def stats(value: float, se: float | None, *, n: int = 1, note: str | None = None) -> MetricStats:
    return MetricStats(value=value, std=None, n=n, min=value, max=value, se=se, se_note=note)


def test_a_regression_needs_the_tolerance_and_significance_and_shows_its_interval():
    # AL 2.80 → 2.70 (−3.6%, tolerance −2% = 0.056), se 0.02 each: SE_d 0.02828, z 3.536.
    row = judge(
        AL, stats(2.80, 0.02), stats(2.70, 0.02), cell="c", metric="m", sigmas=2, level=0.005
    )
    assert row.verdict == "regression" and row.decided_by == "significance"
    assert row.difference_se == pytest.approx(0.028284, abs=1e-6)
    assert row.p_value == pytest.approx(2.035e-4, rel=1e-3)
    low, high = row.interval
    assert low == pytest.approx(-0.1 - 2.5758 * 0.028284, abs=1e-4)
    assert high == pytest.approx(-0.1 + 2.5758 * 0.028284, abs=1e-4) and high < 0
    assert row.detectable == pytest.approx(
        max(0.056, 2.5758 * 0.028284) + 0.8416 * 0.028284, abs=1e-4
    )
    # At a stricter level (many figures gated) the same change is not significant: passes.
    strict = judge(
        AL, stats(2.80, 0.02), stats(2.70, 0.02), cell="c", metric="m", sigmas=2, level=1e-4
    )
    assert strict.verdict == "within_noise"
    # Significant but inside the tolerance: a pass. Lower-is-better works the same way.
    small = judge(
        AL, stats(2.80, 0.001), stats(2.77, 0.001), cell="c", metric="m", sigmas=2, level=0.005
    )
    assert small.verdict == "pass" and small.p_value < 1e-6
    ttft = judge(
        TTFT, stats(50.0, 1.0), stats(60.0, 1.0), cell="c", metric="m", sigmas=2, level=0.005
    )
    assert ttft.verdict == "regression"
    better = judge(
        TTFT, stats(50.0, 1.0), stats(40.0, 1.0), cell="c", metric="m", sigmas=2, level=0.005
    )
    assert better.verdict == "improved"


def test_rows_without_errors_fall_back_and_say_why():
    old = judge(
        AL, stats(2.80, None), stats(2.70, 0.02), cell="c", metric="m", sigmas=2, level=0.005
    )
    assert old.verdict == "regression" and old.decided_by == "tolerance"
    assert old.note.startswith("baseline without stored errors (older file): older rule")
    few = stats(2.70, None, note="no noise estimate: 3 conversations (< 5)")
    row = judge(AL, stats(2.80, 0.02), few, cell="c", metric="m", sigmas=2, level=0.005)
    assert row.note.startswith("results: no noise estimate: 3 conversations (< 5)")
    assert row.decided_by == "tolerance" and row.interval is None and row.detectable is None


def test_power_and_false_alarms_match_the_formula_in_simulation():
    """Draw each side's figure from N(truth, se²): the catch rate of the detectable
    worsening is the configured power, and an unchanged figure almost never fails."""
    rng = random.Random(7)
    se, level, value = 0.015, 0.05 / 10, 2.8
    allowed = 0.02 * value
    detectable = detectable_worsening(allowed, math.sqrt(2) * se, level, 0.8)
    trials = 4000

    def failures(drop: float) -> int:
        count = 0
        for _ in range(trials):
            base = stats(rng.gauss(value, se), se)
            now = stats(rng.gauss(value - drop, se), se)
            row = judge(AL, base, now, cell="c", metric="m", sigmas=2, level=level)
            count += row.verdict == "regression"
        return count

    assert failures(detectable) / trials == pytest.approx(0.8, abs=0.025)
    assert failures(0.0) / trials <= level


def _cell(root, repeat: int, accepted: list[int], errors: CellErrors | None) -> None:
    write_cell(
        root, summary(repeat=repeat, spec=spec_decode(1000, accepted), standard_errors=errors)
    )


def _compare_with(baseline: Baseline, root: Path) -> GateReport:
    """The gate's comparison of the results at `root` against `baseline`, default rules."""
    manifest = read_manifest(root)
    return compare(
        baseline,
        snapshot(root),
        GateRules(),
        current_suite=suite_identity(manifest),
        current_servers=server_summaries(manifest),
    )


def test_m_counts_every_tested_figure_and_older_results_are_not_in_the_family(tmp_path):
    errors = CellErrors(
        num_conversations=40,
        resamples=400,
        seed=0,
        figures={
            "acceptance_length": 0.02,
            "per_position_acceptance_1": 0.01,
            "per_position_acceptance_2": 0.01,
            "per_position_acceptance_3": 0.01,
            "output_tok_s_per_gpu": 10.0,
            "ttft_ms_median": 1.0,
            "e2e_ms_median": 10.0,
            "tpot_ms_median": 0.5,
        },
    )
    base, now, old = tmp_path / "base", tmp_path / "now", tmp_path / "old"
    for root in (base, now, old):
        write_manifest(root)
    _cell(base, 0, [800, 600, 400], errors)
    _cell(now, 0, [700, 500, 300], errors)  # AL 2.8 → 2.5, −10.7%
    _cell(old, 0, [700, 500, 300], None)
    baseline = build_baseline(base)
    report = _compare_with(baseline, now)
    tested = [row for row in report.comparisons if row.decided_by == "significance"]
    assert len(tested) == 8 and all(row.level == pytest.approx(0.05 / 8) for row in tested)
    al = next(row for row in tested if row.metric == "acceptance_length")
    assert al.verdict == "regression" and al.p_value < al.level
    assert any("α / m = 0.05 / 8" in note for note in report.notes)
    fallback = _compare_with(baseline, old)
    rows = [row for row in fallback.comparisons if row.metric != "num_failed"]
    assert all(row.decided_by == "tolerance" for row in rows)
    assert all(row.note.startswith("results without stored errors") for row in rows)


def test_baseline_save_warns_on_figures_too_noisy_for_their_tolerance(tmp_path):
    errors = CellErrors(
        num_conversations=32,
        resamples=400,
        seed=0,
        figures={"acceptance_length": 0.03, "output_tok_s_per_gpu": 2.0},
    )
    write_manifest(tmp_path)
    _cell(tmp_path, 0, [800, 600, 400], errors)
    baseline = build_baseline(tmp_path)
    figures = {f.metric: f for f in baseline_power(baseline, GateRules())}
    assert set(figures) == {"acceptance_length", "output_tok_s_per_gpu"}
    # m = 2, level 0.025; a same-size candidate: ν = 2 × 31 = 62, t_{0.975} 1.9990,
    # t_{0.8} 0.8474. AL: SE_d = √2 × 0.03 = 0.04243, tolerance 2% of 2.8 = 0.056.
    al = figures["acceptance_length"]
    assert al.detectable == pytest.approx(1.9990 * 0.042426 + 0.8474 * 0.042426, abs=2e-4)
    assert not al.resolves and figures["output_tok_s_per_gpu"].resolves
    # The SE_d that catches 1.5 × tolerance 80% of the time: 0.5 × 0.056 / 0.8474 would put
    # the significance bar above the tolerance, so 1.5 × 0.056 / (1.9990 + 0.8474) = 0.02951,
    # i.e. 32 × (0.04243 / 0.02951)² = 66.1 → 67 conversations.
    assert al.conversations_needed == 67
    warnings = baseline_warnings(baseline, GateRules())
    assert len(warnings) == 2 and warnings[0].startswith(
        "eagle3/speed-bench-qualitative/c8 acceptance_length: detects"
    )
    assert "1 of 2 gated figures cannot resolve their tolerance" in warnings[1]
    assert baseline_warnings(baseline, GateRules(significance=0)) == []


def test_the_snapshot_combines_repeat_errors_and_passes_notes_on(tmp_path):
    def errors(se: float, conversations: int = 40, note: str | None = None) -> CellErrors:
        figures = {} if note else {"acceptance_length": se}
        return CellErrors(
            num_conversations=conversations, resamples=400, seed=0, figures=figures, note=note
        )

    write_manifest(tmp_path / "two")
    _cell(tmp_path / "two", 0, [800, 600, 400], errors(0.03))
    _cell(tmp_path / "two", 1, [800, 600, 400], errors(0.04))
    al = snapshot(tmp_path / "two").cells["eagle3/speed-bench-qualitative/c8"].metrics
    # Equal repeats (std 0): √(0.03² + 0.04²) / 2 = 0.025 from within the runs.
    assert al["acceptance_length"].se == pytest.approx(0.025)
    assert al["acceptance_length"].conversations == 40
    # A figure the errors do not cover has none, and says so.
    assert al["per_position_acceptance_1"].se is None
    assert al["per_position_acceptance_1"].se_note == (
        "no noise estimate: no standard error stored for this figure"
    )
    write_manifest(tmp_path / "few")
    _cell(
        tmp_path / "few",
        0,
        [800, 600, 400],
        errors(0, 3, "no noise estimate: 3 conversations (< 5)"),
    )
    few = snapshot(tmp_path / "few").cells["eagle3/speed-bench-qualitative/c8"].metrics
    assert few["acceptance_length"].se is None
    assert few["acceptance_length"].se_note == "no noise estimate: 3 conversations (< 5)"


def test_a_single_repeat_borrows_the_baseline_s_per_run_spread():
    # Baseline of 3 repeats, std 0.05 (run-to-run), se 0.03; a candidate of one repeat with
    # a within-run se of 0.02 has at least the per-run noise 0.05.
    baseline = MetricStats(value=2.8, std=0.05, n=3, min=2.75, max=2.85, se=0.03)
    current = stats(2.70, 0.02)
    row = judge(AL, baseline, current, cell="c", metric="m", sigmas=2, level=0.005)
    assert row.difference_se == pytest.approx(math.hypot(0.03, 0.05))
    assert row.verdict == "within_noise"  # z = 0.1 / 0.0583 = 1.71 < 2.58
