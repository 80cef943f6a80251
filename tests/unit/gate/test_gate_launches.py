"""The launch-level rule: medians and MADs of launch values, the material threshold, fallback.

Results directories are written through the `CellSummary` contract with each summary's
`launch` set (one repeat per launch unless a test says otherwise), in the launches layout
`<label>/<workload>/c<N>/l<L>/r<M>/`; one test writes them in today's `c<N>/r<M>` folders to
show that the snapshot reads the launch from the summary, not from the folder name.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from statistics import mean, stdev

import pytest
from gate_fixtures import per_category, spec_decode, summary, write_manifest
from harness import run_cli

from specbench.gate.baseline import build_baseline, load_baseline, save_baseline
from specbench.gate.baseline_power import baseline_power
from specbench.gate.compare import compare, judge
from specbench.gate.display import verdict
from specbench.gate.junit import junit_xml
from specbench.gate.launches import LaunchComparison
from specbench.gate.rules import GateRules, MetricRule, load_rules
from specbench.gate.snapshot import MetricStats, snapshot
from specbench.gate.text import explanation, row_texts
from specbench.render.verdict import verdict_markdown
from specbench.results.loading import read_manifest
from specbench.stats.launches import MAD_TO_SIGMA, mad_sigma
from specbench.store.summary import CellErrors

CELL = "eagle3/speed-bench-qualitative/c8"
TOK_S = "output_tok_s_per_gpu"
THROUGHPUT = MetricRule(direction="higher", relative=0.05, material=0.02)


def launches(*values: float) -> MetricStats:
    """A figure measured on one repeat per launch: launch values `values`."""
    return MetricStats(
        value=mean(values),
        std=stdev(values),
        n=len(values),
        min=min(values),
        max=max(values),
        launch_values=dict(enumerate(values)),
    )


def judged(baseline: MetricStats, current: MetricStats, rule=THROUGHPUT, sigmas: float = 2.0):
    return judge(rule, baseline, current, cell="c", metric=TOK_S, sigmas=2.0, launch_sigmas=sigmas)


def test_the_issue_s_example_is_beyond_the_material_threshold_but_within_the_noise():
    """Baseline launches [100, 101, 99], candidate [97, 98, 96]: medians 100 and 97 (−3%),
    MAD 1 on each side (deviations 0, 1, 1), so σ = 1.4826 each and the noise is
    2 × √(1.4826² + 1.4826²) = 4.19. The −3 is beyond the 2% material threshold (2.0) but
    not beyond 4.19: `within_noise`, a pass. Three launches cannot tell a 3-point shift
    from launch noise of σ ≈ 1.5 at k = 2; at k = 1 (noise 2.10) the same values regress."""
    row = judged(launches(100, 101, 99), launches(97, 98, 96))
    assert row.launches is not None
    assert (row.launches.baseline_median, row.launches.current_median) == (100, 97)
    assert row.launches.baseline_sigma == pytest.approx(MAD_TO_SIGMA)
    assert row.noise == pytest.approx(2 * math.sqrt(2) * 1.4826, abs=1e-9)
    assert row.noise == pytest.approx(4.193, abs=1e-3)
    assert row.allowed == pytest.approx(2.0) and row.change == -3
    assert row.relative_change == pytest.approx(-0.03)
    assert row.verdict == "within_noise" and row.decided_by == "launches"
    assert row.rule == "launches (3 vs 3, median/MAD, material 2%)"
    strict = judged(launches(100, 101, 99), launches(97, 98, 96), sigmas=1.0)
    assert strict.noise == pytest.approx(2.0967, abs=1e-4) and strict.verdict == "regression"


def test_a_change_beyond_noise_but_below_the_material_threshold_passes_and_1_percent_fails():
    """[100, 100.1, 99.9] → [98.5, 98.6, 98.4]: −1.5%, noise 2 × √2 × 0.14826 = 0.42."""
    baseline, current = launches(100, 100.1, 99.9), launches(98.5, 98.6, 98.4)
    row = judged(baseline, current)
    assert row.noise == pytest.approx(0.4193, abs=1e-4) and row.change == pytest.approx(-1.5)
    assert row.verdict == "pass" and row.tolerance == "-2% material"
    tight = THROUGHPUT.model_copy(update={"material": 0.01})
    row = judged(baseline, current, rule=tight)
    assert row.verdict == "regression" and row.allowed == pytest.approx(1.0)
    assert row.rule == "launches (3 vs 3, median/MAD, material 1%)"
    # Better by as much, beyond noise and material: improved.
    assert judged(current, baseline, rule=tight).verdict == "improved"
    # Lower is better: the same values are an improvement of latency.
    latency = MetricRule(direction="lower", relative=0.1, material=0.01)
    assert judged(baseline, current, rule=latency).verdict == "improved"


def test_one_outlying_launch_moves_neither_median_nor_mad():
    row = judged(launches(100, 100.1, 99.9, 100.05, 60), launches(98.5, 98.6, 98.4))
    assert row.launches is not None and row.launches.baseline_median == 100
    assert row.launches.baseline_sigma == pytest.approx(0.1 * MAD_TO_SIGMA)
    assert row.verdict == "pass"
    assert row.rule == "launches (5 vs 3, median/MAD, material 2%)"


def test_noise_false_leaves_the_material_threshold_alone():
    rule = THROUGHPUT.model_copy(update={"noise": False})
    row = judged(launches(100, 101, 99), launches(97, 98, 96), rule=rule)
    assert row.verdict == "regression" and row.noise is None


def test_fewer_than_three_launches_fall_back_to_the_within_launch_rule_and_say_so():
    row = judged(launches(100, 101, 99), launches(97, 98))
    assert row.launches is None and row.decided_by == "noise band"
    assert row.rule == "within-launch (launches 3 vs 2: fewer than 3 on a side)"
    one = MetricStats(value=97, std=None, n=1, min=97, max=97)
    assert judged(one, one).rule == "within-launch"


@pytest.mark.parametrize(("sigmas", "low", "high"), [(2.0, 0.06, 0.09), (1.0, 0.15, 0.20)])
def test_pure_launch_noise_clears_the_bar_as_the_docs_say(sigmas, low, high):
    """Seeded simulation, 3 launches a side drawn from one normal distribution: the share
    whose worsening exceeds the noise bar (docs: 7% at k = 2, 17% at k = 1)."""
    draw = random.Random(39)
    trials = 6000
    beyond = 0
    for _ in range(trials):
        baseline = tuple(draw.gauss(0, 1) for _ in range(3))
        current = tuple(draw.gauss(0, 1) for _ in range(3))
        pair = LaunchComparison(baseline, current, sigmas, 0.02)
        beyond += pair.baseline_median - pair.current_median > pair.noise
    assert low < beyond / trials < high


def test_mad_sigma_of_three_values_is_the_smaller_gap_to_the_median():
    assert mad_sigma((99.0, 100.0, 103.0)) == pytest.approx(MAD_TO_SIGMA * 1)
    assert mad_sigma((5.0, 5.0, 5.0)) == 0


# --- through results directories, the snapshot, the baseline file and the renderers ------


def write_launches(
    root: Path,
    tok_s: Sequence[Sequence[float]],
    *,
    folders: str = "launches",
    first: int = 0,
    standard_errors: CellErrors | None = None,
    **manifest: object,
) -> Path:
    """One eagle3 cell at c=8: `tok_s[L]` the throughput of launch L's repeats.

    `folders`: `launches` writes `c8/l<L>/r<M>/`; `repeats` today's `c8/r<N>/`, numbering
    every summary as its own repeat folder while its `launch` field says L.
    """
    write_manifest(root, **manifest)  # type: ignore[arg-type]
    folder_index = 0
    for launch, rates in enumerate(tok_s, start=first):
        for repeat, rate in enumerate(rates):
            cell = summary(
                repeat=repeat,
                tok_s=rate,
                spec=spec_decode(1000, [800, 600, 400]),
                categories=per_category({"code": (2.5 + launch / 10, 100), "chat": (2.0, 100)}),
                launch=launch,
                standard_errors=standard_errors,
            )
            base = root / "eagle3" / "speed-bench-qualitative" / "c8"
            if folders == "launches":
                directory = base / f"l{launch}" / f"r{repeat}"
            else:
                directory = base / f"r{folder_index}"
            folder_index += 1
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "summary.json").write_text(cell.model_dump_json(), encoding="utf-8")
    return root


def gate_report(baseline_dir: Path, current_dir: Path, rules: GateRules | None = None):
    manifest = read_manifest(current_dir)
    from specbench.gate.baseline import server_summaries, suite_identity

    return compare(
        build_baseline(baseline_dir),
        snapshot(current_dir),
        rules or GateRules(),
        current_suite=suite_identity(manifest),
        current_servers=server_summaries(manifest),
    )


def test_snapshot_keeps_each_launch_s_value_from_the_summary_not_the_folder(tmp_path):
    # Launch 0 has two repeats (mean 100.5), launches 1 and 2 one each; folders say r0..r3.
    results = write_launches(tmp_path / "r", [[100, 101], [99], [102]], folders="repeats")
    cell = snapshot(results).cells[CELL]
    assert cell.launches == 3 and cell.repeats == 4
    tok_s = cell.metrics[TOK_S]
    assert tok_s.launch_values == {0: 100.5, 1: 99, 2: 102}
    assert tok_s.value == pytest.approx((100 + 101 + 99 + 102) / 4)  # over repeats, as before
    # Acceptance per launch is pooled from that launch's counters: 1 + 1800/1000 each.
    al = cell.metrics["acceptance_length"].launch_values
    assert al == {0: pytest.approx(2.8), 1: pytest.approx(2.8), 2: pytest.approx(2.8)}
    code = cell.categories["code"]["acceptance_length"].launch_values
    assert code == {0: pytest.approx(2.5), 1: pytest.approx(2.6), 2: pytest.approx(2.7)}
    # One launch: no launch values, as in files saved before launches.
    single = snapshot(write_launches(tmp_path / "one", [[100, 101]])).cells[CELL]
    assert single.launches == 1 and single.metrics[TOK_S].launch_values is None


def test_baseline_file_keeps_launch_values_and_an_old_file_loads_as_one_launch(tmp_path):
    results = write_launches(tmp_path / "r", [[100], [100.1], [99.9]])
    out = tmp_path / "baseline.json"
    saved = save_baseline(results, out)
    raw = json.loads(out.read_text())
    assert raw["schema_version"] == 2 and raw["cells"][CELL]["launches"] == 3
    assert raw["cells"][CELL]["metrics"][TOK_S]["launch_values"] == {
        "0": 100.0,
        "1": 100.1,
        "2": 99.9,
    }
    assert load_baseline(out) == saved
    # A version-1 file, as specbench wrote it before launches: no launches, no launch values.
    old = {**raw, "schema_version": 1}
    for cell in old["cells"].values():
        del cell["launches"]
        for stats in cell["metrics"].values():
            del stats["launch_values"]
        for figures in cell["categories"].values():
            for stats in figures.values():
                del stats["launch_values"]
    (tmp_path / "v1.json").write_text(json.dumps(old))
    loaded = load_baseline(tmp_path / "v1.json")
    assert loaded.schema_version == 1 and loaded.cells[CELL].launches == 1
    assert loaded.cells[CELL].metrics[TOK_S].launch_values is None
    current = snapshot(write_launches(tmp_path / "c", [[98.5], [98.6], [98.4]]))
    manifest = read_manifest(results)
    from specbench.gate.baseline import server_summaries, suite_identity

    report = compare(
        loaded,
        current,
        GateRules(),
        current_suite=suite_identity(manifest),
        current_servers=server_summaries(manifest),
    )
    row = next(r for r in report.comparisons if r.metric == TOK_S)
    assert row.rule == "within-launch (launches 1 vs 3: fewer than 3 on a side)"


def test_material_override_in_the_rules_file_fails_a_1_5_percent_drop(tmp_path):
    baseline = write_launches(tmp_path / "b", [[100], [100.1], [99.9]])
    current = write_launches(tmp_path / "c", [[98.5], [98.6], [98.4]], first=3)
    report = gate_report(baseline, current)
    row = next(r for r in report.comparisons if r.metric == TOK_S)
    assert row.verdict == "pass" and row.relative_change == pytest.approx(-0.015)
    assert report.exit_code == 0
    assert any(note.startswith("launch-level rule (") for note in report.notes)
    rules = tmp_path / "gate.toml"
    rules.write_text(f'[metrics.{TOK_S}]\ndirection = "higher"\nrelative = 0.05\nmaterial = 0.01\n')
    report = gate_report(baseline, current, load_rules(rules))
    row = next(r for r in report.comparisons if r.metric == TOK_S)
    assert row.verdict == "regression" and report.exit_code == 1
    assert row.rule == "launches (3 vs 3, median/MAD, material 1%)"
    # Every other figure is judged the same way, with its declared 2%.
    al = next(r for r in report.comparisons if r.metric == "acceptance_length")
    assert al.rule == "launches (3 vs 3, median/MAD, material 2%)" and al.verdict == "pass"
    code = next(r for r in report.comparisons if r.metric == "acceptance_length[code]")
    assert code.launches is not None and code.change == pytest.approx(0.3)  # 2.6 → 2.9
    ceiling = next(r for r in report.comparisons if r.metric == "num_failed")
    assert (
        ceiling.decided_by == "ceiling" and ceiling.rule == "ceiling (worst repeat of any launch)"
    )


def test_every_output_says_which_rule_each_row_used(tmp_path):
    baseline = write_launches(tmp_path / "b", [[100], [100.1], [99.9]])
    current = write_launches(tmp_path / "c", [[98.5], [98.6], [98.4]])
    fewer = write_launches(tmp_path / "f", [[98.5], [98.6]])
    rules = GateRules(metrics={TOK_S: MetricRule(direction="higher", relative=0.05, material=0.01)})
    report = gate_report(baseline, current, rules)
    row = next(r for r in report.comparisons if r.metric == TOK_S)
    texts = row_texts(row)
    assert texts[2] == "100 (median of 3 launches, σ 0.15)"
    assert texts[3] == "98.50 (median of 3 launches, σ 0.15)"
    assert texts[4] == "-1.5%" and texts[5] == "-1% material (noise ±0.42)"
    assert texts[7] == "launches (3 vs 3, median/MAD, material 1%): beyond noise ±0.42"
    sentence = explanation(row)
    assert "rule: launches (3 vs 3, median/MAD, material 1%)" in sentence
    markdown = verdict_markdown(verdict(report))
    assert f"- {CELL} {TOK_S}: REGRESSION" in markdown
    assert "launches (3 vs 3, median/MAD, material 1%): beyond noise ±0.42 | **REGRESSION**" in (
        markdown
    )
    junit = junit_xml(report).decode()
    assert "rule: launches (3 vs 3, median/MAD, material 1%)" in junit
    fallback = gate_report(baseline, fewer, rules)
    row = next(r for r in fallback.comparisons if r.metric == TOK_S)
    assert row_texts(row)[7] == (
        "within-launch (launches 3 vs 2: fewer than 3 on a side): noise band"
    )
    assert "rule: within-launch (launches 3 vs 2: fewer than 3 on a side)" in explanation(row)
    assert any(
        "fewer than 3 on a side: judged by the within-launch rule" in n for n in (fallback.notes)
    )


def test_material_rules_are_validated_and_default_to_the_declaration(tmp_path):
    effective = GateRules().effective()
    assert {rule.material for name, rule in effective.items() if name != "num_failed"} == {0.02}
    assert effective["num_failed"].material is None  # a ceiling has no material threshold
    assert GateRules().launch_sigmas == 2.0
    rules = tmp_path / "gate.toml"
    rules.write_text('[metrics.num_failed]\ndirection = "lower"\nmax = 0\nmaterial = 0.01\n')
    with pytest.raises(Exception, match=r"gate.toml: metrics.num_failed: material is for"):
        load_rules(rules)
    rules.write_text(
        '[metrics.acceptance_length]\ndirection = "higher"\nrelative = 0.02\nmaterial = 1.5\n'
    )
    with pytest.raises(Exception, match=r"gate.toml: metrics.acceptance_length.material"):
        load_rules(rules)
    rules.write_text("launch_sigmas = -1\n")
    with pytest.raises(Exception, match=r"gate.toml: launch_sigmas"):
        load_rules(rules)


def test_the_json_verdict_names_each_check_s_rule_and_keeps_the_launch_values(tmp_path):
    from specbench.gate.run import GateOptions, run_gate

    baseline_dir = write_launches(tmp_path / "b", [[100], [100.1], [99.9]])
    baseline = tmp_path / "b.json"
    save_baseline(baseline_dir, baseline)
    rules = tmp_path / "gate.toml"
    rules.write_text(f'[metrics.{TOK_S}]\ndirection = "higher"\nrelative = 0.05\nmaterial = 0.01\n')
    out = tmp_path / "gate.json"
    current = write_launches(tmp_path / "c", [[98.5], [98.6], [98.4]])
    report = run_gate(GateOptions(current, baseline, rules=rules, json=out))
    record = json.loads(out.read_text())
    assert record["kind"] == "specbench-gate" and record["schema_version"] == 1
    assert record["exit_code"] == report.exit_code == 1
    check = next(c for c in record["checks"] if c["metric"] == TOK_S)
    assert check["verdict"] == "regression" and check["decided_by"] == "launches"
    assert check["rule"] == "launches (3 vs 3, median/MAD, material 1%)"
    assert (check["baseline"], check["current"]) == (100.0, 98.5)
    assert check["allowed"] == pytest.approx(1.0) and check["noise"] == pytest.approx(0.4193, 1e-3)
    assert check["launches"]["baseline"] == [100.0, 100.1, 99.9]
    assert check["launches"]["material"] == 0.01 and check["launches"]["sigmas"] == 2.0
    ceiling = next(c for c in record["checks"] if c["metric"] == "num_failed")
    assert ceiling["rule"] == "ceiling (worst repeat of any launch)"
    fewer = write_launches(tmp_path / "f", [[98.5], [98.6]])
    cli = run_cli("gate", fewer, "--baseline", baseline, "--json", out, timeout=120)
    assert cli.returncode == 0, cli.stderr
    check = next(c for c in json.loads(out.read_text())["checks"] if c["metric"] == TOK_S)
    assert check["rule"] == "within-launch (launches 3 vs 2: fewer than 3 on a side)"
    assert check["launches"] is None and check["decided_by"] == "noise band"


def test_a_failed_repeat_of_a_launch_is_reported_with_its_launch(tmp_path):
    results = write_launches(tmp_path / "r", [[100], [100.1], [99.9]])
    failed = results / "eagle3" / "speed-bench-qualitative" / "c8" / "l1" / "r1"
    failed.mkdir(parents=True)
    (failed / "failure.json").write_text(json.dumps({"error": "server died\ntraceback"}))
    assert snapshot(results).failed_cells == {CELL: "l1/r1: server died"}


def test_launch_level_rows_stay_in_the_bonferroni_family_and_in_the_power_check(tmp_path):
    errors = CellErrors(
        num_conversations=40,
        resamples=400,
        seed=0,
        figures={"acceptance_length": 0.02, TOK_S: 10.0},
    )
    baseline_dir = write_launches(tmp_path / "b", [[100], [100.1], [99.9]], standard_errors=errors)
    baseline = build_baseline(baseline_dir)
    # Against one launch the test judges both figures: m = 2.
    one = write_launches(tmp_path / "one", [[98.5]], standard_errors=errors)
    rows = gate_report(baseline_dir, one).comparisons
    tested = [r for r in rows if r.decided_by == "significance"]
    assert len(tested) == 2 and {r.level for r in tested} == {0.025}
    # Against three launches the launch-level rule judges both, its sampling term at the
    # same α / m = 0.025 (z = 1.96): se_L = √3 × 10 / √3 = 10 tok/s a side, noise 27.7.
    three = write_launches(tmp_path / "three", [[98.5], [98.6], [98.4]], standard_errors=errors)
    rows = gate_report(baseline_dir, three).comparisons
    judged_rows = [r for r in rows if r.metric in (TOK_S, "acceptance_length")]
    assert {r.decided_by for r in judged_rows} == {"launches"}
    assert {round(r.launches.sampling_z, 3) for r in judged_rows if r.launches} == {1.96}
    tok = next(r for r in judged_rows if r.metric == TOK_S)
    assert tok.noise == pytest.approx(1.96 * math.sqrt(2) * 10, rel=1e-3)
    # `baseline save` checks the power a one-launch candidate would have.
    assert {f.metric for f in baseline_power(baseline, GateRules())} == {
        "acceptance_length",
        TOK_S,
    }


def test_identical_launches_take_one_launch_s_own_error_at_the_test_s_level_as_noise():
    """Launches that re-measure the same conversations with deterministic outputs (AL at
    temperature 0) agree exactly: MAD 0. The noise is then the sampling term, one launch's
    own standard error √3 × (the stored se of the mean of 3 launches) on each side, at the
    one-sided bar of the gate's level: se 0.015 → se_L 0.02598, at α / m = 0.05 / 12 the
    bar z = 2.638 (Φ(2.638) = 0.99583), noise 2.638 × √2 × 0.02598 = 0.0969. A drop of
    0.09 from 2.8 (3.2%, over the material 0.056) is within that noise; 0.10 regresses.
    With no error stored, the material alone decides (3 of 8 seed-only changes failed on
    the emulator that way, docs/ci-gate.md); with the test off (no level), k stands for z."""
    level = 0.05 / 12
    baseline = launches(2.8, 2.8, 2.8).model_copy(update={"se": 0.015})
    within = launches(2.71, 2.71, 2.71).model_copy(update={"se": 0.015})
    row = judge(THROUGHPUT, baseline, within, cell="c", metric=TOK_S, sigmas=2.0, level=level)
    assert row.launches is not None
    assert row.launches.baseline_sigma == 0 and row.launches.spread_noise == 0
    assert row.launches.baseline_launch_se == pytest.approx(0.015 * math.sqrt(3))
    assert row.launches.sampling_z == pytest.approx(2.638, abs=1e-3)
    assert row.noise == pytest.approx(0.0969, abs=1e-4)
    assert row.change == pytest.approx(-0.09) and row.verdict == "within_noise"
    beyond = launches(2.7, 2.7, 2.7).model_copy(update={"se": 0.015})
    row = judge(THROUGHPUT, baseline, beyond, cell="c", metric=TOK_S, sigmas=2.0, level=level)
    assert row.verdict == "regression"
    untested = judged(baseline, within)  # no level: z = k = 2, noise 2 × √2 × 0.02598
    assert untested.noise == pytest.approx(0.0735, abs=1e-4) and untested.verdict == "regression"
    unknown = judged(launches(2.8, 2.8, 2.8), launches(2.74, 2.74, 2.74))
    assert unknown.noise == 0 and unknown.verdict == "regression"
    # A spread larger than the sampling term decides: [100, 101, 99] with se 0.1 → 4.19.
    spread = judged(launches(100, 101, 99).model_copy(update={"se": 0.1}), launches(97, 98, 96))
    assert spread.noise == pytest.approx(2 * math.sqrt(2) * MAD_TO_SIGMA)
