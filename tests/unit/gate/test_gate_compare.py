"""Verdicts: tolerance AND noise, the n = 1 fallback, ceilings, missing and new cells, suites."""

from __future__ import annotations

import math

import pytest
from gate_fixtures import spec_decode, summary, write_cell, write_results

from specbench.common.errors import SpecbenchError
from specbench.gate.baseline import build_baseline, server_summaries, suite_identity
from specbench.gate.compare import compare, judge, noise_band
from specbench.gate.rules import MetricRule, load_rules
from specbench.gate.snapshot import MetricStats, snapshot
from specbench.results.loading import read_manifest

AL = MetricRule(direction="higher", relative=0.02)
CELL = "eagle3/speed-bench-qualitative/c8"


def stats(value: float, std: float | None = None, n: int = 1) -> MetricStats:
    return MetricStats(value=value, std=std, n=n, min=value, max=value)


def verdict(rule: MetricRule, baseline: MetricStats, current: MetricStats, sigmas: float = 2.0):
    return judge(rule, baseline, current, cell="c", metric="m", sigmas=sigmas)


def test_noise_band_is_the_standard_error_of_the_difference():
    band, note = noise_band(stats(2.8, 0.03, 3), stats(2.7, 0.04, 2), 2.0)
    assert band == pytest.approx(2 * math.sqrt(0.03**2 / 3 + 0.04**2 / 2)) and note == ""
    band, note = noise_band(stats(2.8, 0.03, 3), stats(2.7), 2.0)
    assert band == pytest.approx(2 * 0.03 * math.sqrt(1 / 3 + 1))
    assert note == "noise from the baseline spread only"
    assert noise_band(stats(2.8), stats(2.7), 2.0) == (
        None,
        "n=1: tolerance only (no spread to estimate noise)",
    )


def test_regression_needs_both_tolerance_and_noise():
    # -3.6%: beyond -2%, and beyond a tight noise band (±0.033).
    row = verdict(AL, stats(2.8, 0.02, 3), stats(2.7, 0.02, 3))
    assert row.verdict == "regression"
    assert row.allowed == pytest.approx(0.056) and row.noise == pytest.approx(0.0327, abs=1e-4)
    assert row.relative_change == pytest.approx(-0.1 / 2.8)
    # The same change with noisy repeats (band ±0.16) is noise, and passes.
    row = verdict(AL, stats(2.8, 0.1, 3), stats(2.7, 0.1, 3))
    assert row.verdict == "within_noise"
    # Inside the tolerance it passes whatever the noise.
    assert verdict(AL, stats(2.8, 0.0, 3), stats(2.76, 0.0, 3)).verdict == "pass"
    # Better beyond tolerance and noise.
    assert verdict(AL, stats(2.8, 0.01, 3), stats(2.9, 0.01, 3)).verdict == "improved"


def test_single_repeat_falls_back_to_the_tolerance_and_says_so():
    row = verdict(AL, stats(2.8), stats(2.7))
    assert row.verdict == "regression" and row.noise is None
    assert row.note == (
        "baseline without stored errors (older file): older rule; "
        "n=1: tolerance only (no spread to estimate noise)"
    )
    assert row.decided_by == "tolerance"
    assert verdict(AL, stats(2.8), stats(2.75)).verdict == "pass"


def test_lower_is_better_and_absolute_and_spread_tolerances():
    ttft = MetricRule(direction="lower", relative=0.10)
    assert verdict(ttft, stats(100.0), stats(111.0)).verdict == "regression"
    assert verdict(ttft, stats(100.0), stats(109.0)).verdict == "pass"
    assert verdict(ttft, stats(100.0), stats(80.0)).verdict == "improved"
    absolute = MetricRule(direction="higher", absolute=0.05)
    assert verdict(absolute, stats(2.8), stats(2.74)).verdict == "regression"
    spread = MetricRule(direction="lower", spread=3)
    row = verdict(spread, stats(100.0, 2.0, 4), stats(105.0, 2.0, 4))
    assert row.allowed == pytest.approx(6.0) and row.verdict == "pass"
    with pytest.raises(
        SpecbenchError, match=r"rule m: tolerance 'spread' needs a baseline with >= 2"
    ):
        verdict(spread, stats(100.0), stats(105.0))


def test_ceiling_ignores_baseline_and_noise_and_judges_the_worst_repeat():
    failed = MetricRule(direction="lower", max=0, noise=False)
    current = MetricStats(value=0.5, std=0.7, n=2, min=0.0, max=1.0)
    row = verdict(failed, stats(0.0, 0.0, 2), current)
    assert row.verdict == "regression" and row.note == "worst repeat 1"
    assert verdict(failed, stats(3.0), stats(0.0)).verdict == "pass"


def test_noise_check_can_be_switched_off():
    strict = MetricRule(direction="higher", relative=0.02, noise=False)
    row = verdict(strict, stats(2.8, 0.1, 3), stats(2.7, 0.1, 3))
    assert row.verdict == "regression" and row.note == "noise check off"
    assert verdict(AL, stats(2.8, 0.1, 3), stats(2.7, 0.1, 3), sigmas=0).verdict == "regression"


def run_compare(tmp_path, baseline_dir, current_dir, rules=None, strict=False):
    baseline = build_baseline(baseline_dir)
    manifest = read_manifest(current_dir)
    return compare(
        baseline,
        snapshot(current_dir),
        rules or load_rules(None),
        current_suite=suite_identity(manifest),
        current_servers=server_summaries(manifest),
        strict_suite=strict,
    )


def test_identical_results_pass_every_check(tmp_path):
    results = write_results(tmp_path / "a")
    report = run_compare(tmp_path, results, results)
    assert report.exit_code == 0
    assert {row.verdict for row in report.comparisons} == {"pass"}
    assert [row.metric for row in report.comparisons] == [
        "acceptance_length",
        "per_position_acceptance_1",
        "per_position_acceptance_2",
        "per_position_acceptance_3",
        "output_tok_s_per_gpu",
        "ttft_ms_median",
        "e2e_ms_median",
        "interactivity_tok_s_per_user",
        "num_failed",
    ]
    assert "identical to the baseline" in report.notes[0]


def test_worse_draft_fails_on_al_and_a_new_draft_path_is_explained(tmp_path):
    baseline = write_results(tmp_path / "a")
    current = write_results(
        tmp_path / "b",
        al_counters=((1000, [700, 450, 300]), (1000, [690, 460, 290])),
        draft="draft-b",
    )
    report = run_compare(tmp_path, baseline, current)
    assert report.exit_code == 1
    failed = {row.metric for row in report.with_verdict("regression")}
    assert failed == {
        "acceptance_length",
        "per_position_acceptance_1",
        "per_position_acceptance_2",
        "per_position_acceptance_3",
    }
    assert any("server settings differ" in note for note in report.notes)
    assert "servers.eagle3.config.speculative.model: 'draft-a' in the baseline, 'draft-b' now" in (
        report.notes
    )
    with pytest.raises(SpecbenchError, match=r"suite hash .* differs from the baseline's"):
        run_compare(tmp_path, baseline, current, strict=True)


def test_category_regression_is_caught_on_its_own(tmp_path):
    good = [{"code": (3.0, 300), "chat": (2.0, 300)}] * 2
    worse = [{"code": (2.8, 300), "chat": (2.0, 300)}] * 2
    baseline = write_results(tmp_path / "a", categories=good)
    current = write_results(tmp_path / "b", categories=worse)
    report = run_compare(tmp_path, baseline, current)
    assert [(r.metric, r.verdict) for r in report.comparisons if "[" in r.metric] == [
        ("acceptance_length[chat]", "pass"),
        ("acceptance_length[code]", "regression"),
    ]
    assert report.exit_code == 1


def test_failed_requests_fail(tmp_path):
    baseline = write_results(tmp_path / "a")
    current = write_results(tmp_path / "b", num_failed=(0, 3))
    report = run_compare(tmp_path, baseline, current)
    (row,) = report.with_verdict("regression")
    assert (row.metric, row.current.max, row.note) == ("num_failed", 3.0, "worst repeat 3")


def test_missing_cell_is_bad_input_and_new_cell_is_reported(tmp_path):
    baseline = write_results(tmp_path / "a")
    write_cell(baseline, summary(concurrency=16, spec=spec_decode(100, [80, 60, 40])))
    current = write_results(tmp_path / "b")
    write_cell(current, summary(concurrency=32, spec=spec_decode(100, [80, 60, 40])))
    report = run_compare(tmp_path, baseline, current)
    assert report.exit_code == 2
    assert report.missing_cells == ["eagle3/speed-bench-qualitative/c16"]
    missing = report.with_verdict("missing")
    assert {row.note for row in missing} == {"cell not in the results"}
    assert len(missing) == 9  # every gated metric of the cell is listed
    (new,) = report.with_verdict("new")
    assert (new.cell, new.metric) == ("eagle3/speed-bench-qualitative/c32", "(all)")


def test_metric_gone_from_a_present_cell_fails_as_a_regression(tmp_path):
    baseline = write_results(tmp_path / "a")
    current = tmp_path / "b"
    write_results(current)
    for repeat in (0, 1):
        write_cell(current, summary(repeat=repeat, spec=None))  # speculation switched off
    report = run_compare(tmp_path, baseline, current)
    assert report.exit_code == 1 and report.missing_cells == []
    assert {r.metric for r in report.with_verdict("missing")} >= {"acceptance_length"}
    assert {r.note for r in report.with_verdict("missing")} == {"metric not in the results"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"name": "suite-b"},
            "the baseline comes from suite 'suite-a', the results from suite 'suite-b'",
        ),
        ({"max_tokens": 512}, "workloads[0].max_tokens: 256 in the baseline, 512 now"),
    ],
)
def test_other_suites_are_refused_naming_what_differs(tmp_path, change, message):
    baseline = write_results(tmp_path / "a")
    current = write_results(tmp_path / "b", **change)
    with pytest.raises(SpecbenchError) as error:
        run_compare(tmp_path, baseline, current)
    assert str(error.value).startswith("mismatched suites: ") and message in str(error.value)


def test_cell_measured_differently_is_refused(tmp_path):
    baseline = write_results(tmp_path / "a")
    current = tmp_path / "b"
    write_results(current)
    for repeat in (0, 1):
        write_cell(
            current, summary(repeat=repeat, max_tokens=128, spec=spec_decode(100, [1, 1, 1]))
        )
    with pytest.raises(
        SpecbenchError, match=rf"cell {CELL}: max_tokens is 128 in the results but 256"
    ):
        run_compare(tmp_path, baseline, current)


def test_failed_repeat_of_a_present_cell_fails_and_a_failed_cell_is_missing(tmp_path):
    baseline = write_results(tmp_path / "a")
    write_cell(baseline, summary(concurrency=16, spec=spec_decode(100, [80, 60, 40])))
    current = write_results(tmp_path / "b")
    for cell in ("c8/r2", "c16/r0"):
        failed = current / "eagle3" / "speed-bench-qualitative" / cell
        failed.mkdir(parents=True)
        (failed / "failure.json").write_text('{"error": "server died"}')
    report = run_compare(tmp_path, baseline, current)
    assert report.exit_code == 2 and report.missing_cells == ["eagle3/speed-bench-qualitative/c16"]
    notes = {(row.cell, row.metric, row.note) for row in report.with_verdict("missing")}
    assert (
        CELL,
        "(repeats)",
        "a repeat failed (r2: server died); the others are compared",
    ) in notes
    assert (
        "eagle3/speed-bench-qualitative/c16",
        "acceptance_length",
        "cell failed: r0: server died",
    ) in notes
