"""JUnit XML, the markdown summary ($GITHUB_STEP_SUMMARY) and the CLI's exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from gate_fixtures import spec_decode, summary, write_cell, write_results
from harness import run_cli

from specbench.gate.baseline import save_baseline
from specbench.gate.run import GateOptions, run_gate


def worse(tmp_path):
    """A baseline with cells c8 and c16; results where c8's AL dropped and c16 is missing."""
    baseline_dir = write_results(tmp_path / "a")
    write_cell(baseline_dir, summary(concurrency=16, spec=spec_decode(100, [80, 60, 40])))
    baseline = tmp_path / "baseline.json"
    save_baseline(baseline_dir, baseline)
    current = write_results(
        tmp_path / "b", al_counters=((1000, [700, 450, 300]), (1000, [690, 460, 290]))
    )
    return baseline, current


def test_junit_has_one_case_per_cell_and_metric(tmp_path):
    baseline, current = worse(tmp_path)
    junit = tmp_path / "out" / "gate.xml"
    report = run_gate(GateOptions(results_dir=current, baseline=baseline, junit=junit))
    root = ET.parse(junit).getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == len(report.comparisons) == 18
    failures = root.findall(".//testcase/failure")
    errors = root.findall(".//testcase/error")
    assert root.get("failures") == str(len(failures)) == "4"
    assert root.get("errors") == str(len(errors)) == "9"
    assert {c.get("classname") for c in cases if c.find("error") is not None} == {
        "eagle3/speed-bench-qualitative/c16"
    }
    al = next(
        c
        for c in cases
        if c.get("name") == "acceptance_length"
        and c.get("classname") == "eagle3/speed-bench-qualitative/c8"
    )
    message = al.find("failure").get("message")
    assert "REGRESSION" in message and "change -" in message and "tolerance -2%" in message


def test_summary_goes_to_github_step_summary_when_no_file_is_given(tmp_path, monkeypatch):
    baseline, current = worse(tmp_path)
    step_summary = tmp_path / "step_summary.md"
    step_summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    run_gate(GateOptions(results_dir=current, baseline=baseline))
    text = step_summary.read_text()
    assert text.startswith("earlier step\n### ⚠️ specbench gate: baseline cells missing")
    assert "4 regressed, 9 missing (1 whole cells), 18 checks" in text
    assert "- eagle3/speed-bench-qualitative/c8 acceptance_length: REGRESSION" in text
    assert "| eagle3/speed-bench-qualitative/c8 | acceptance_length | 2.867 ±0.14 (n=2) |" in text
    explicit = tmp_path / "summary.md"
    run_gate(GateOptions(results_dir=current, baseline=baseline, summary=explicit))
    assert explicit.read_text().startswith("### ⚠️")
    assert step_summary.read_text() == text  # --summary wins over the environment


def cli(*args):
    return run_cli(*args, timeout=120)


def test_cli_exit_codes(tmp_path):
    baseline_dir = write_results(tmp_path / "a")
    baseline = tmp_path / "b.json"
    saved = cli("baseline", "save", baseline_dir, "--out", baseline)
    assert saved.returncode == 0, saved.stderr
    assert "baseline of 1 cells" in saved.stdout and saved.stderr == ""
    passed = cli("gate", baseline_dir, "--baseline", baseline)
    assert passed.returncode == 0, passed.stderr
    # The table and the verdict are results: stdout (`gate … > gate.log` keeps them).
    assert "specbench gate: pass" in passed.stdout and passed.stderr == ""
    regressed = write_results(
        tmp_path / "c", al_counters=((1000, [700, 450, 300]), (1000, [690, 460, 290]))
    )
    failed = cli("gate", regressed, "--baseline", baseline)
    assert failed.returncode == 1 and "\nREGRESSION  " in failed.stdout
    assert "acceptance_length[" not in failed.stdout  # no categories in this run
    other = write_results(tmp_path / "d", name="other-suite")
    mismatch = cli("gate", other, "--baseline", baseline, "--summary", tmp_path / "s.md")
    assert mismatch.returncode == 2 and "Traceback" not in mismatch.stderr
    assert "suite 'suite-a'" in mismatch.stderr and "suite 'other-suite'" in mismatch.stderr
    assert "could not compare" in (tmp_path / "s.md").read_text()
    raw = json.loads(baseline.read_text())
    (tmp_path / "v2.json").write_text(json.dumps({**raw, "schema_version": 99}))
    incompatible = cli("gate", baseline_dir, "--baseline", tmp_path / "v2.json")
    assert incompatible.returncode == 2 and "schema_version 99" in incompatible.stderr
    rules = tmp_path / "gate.toml"
    rules.write_text('[metrics.acceptance_length]\ndirection = "higher"\n')
    bad_rules = cli("gate", baseline_dir, "--baseline", baseline, "--rules", rules)
    assert bad_rules.returncode == 2
    assert f"{rules}: metrics.acceptance_length: give exactly one of" in bad_rules.stderr


def test_gate_prints_one_row_per_finding_on_stdout_and_one_line_on_stderr(tmp_path):
    baseline, current = worse(tmp_path)
    gate = cli("gate", current, "--baseline", baseline)
    assert gate.returncode == 2, gate.stderr  # c16 is missing: bad input wins over regressions
    assert gate.stderr.splitlines() == [
        f"error: 1 baseline cell(s) missing from {current} (failed or not run): "
        "eagle3/speed-bench-qualitative/c16"
    ]
    assert "specbench gate: baseline cells missing" in gate.stdout
    regressed = tmp_path / "regressed.json"
    save_baseline(write_results(tmp_path / "r"), regressed)
    failed = cli("gate", current, "--baseline", regressed)
    assert failed.returncode == 1, failed.stderr
    findings = [line.split() for line in failed.stdout.splitlines() if line.startswith("REGR")]
    assert len(findings) == 4  # verdict, cell, metric, baseline, current, change, allowed
    assert [row[:3] for row in findings] == [
        ["REGRESSION", "eagle3/speed-bench-qualitative/c8", metric]
        for metric in (
            "acceptance_length",
            "per_position_acceptance_1",
            "per_position_acceptance_2",
            "per_position_acceptance_3",
        )
    ]
    assert all(len(row) == 7 and row[5].endswith("%") for row in findings)
    assert failed.stdout.splitlines()[-1].startswith("9 checks: 4 REGRESSION listed; 5 pass")
    assert failed.stderr.splitlines() == [
        "regression: 4 finding(s) (cell × metric), each a row of the table on stdout"
    ]
