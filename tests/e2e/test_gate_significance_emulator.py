"""The significance gate end to end on emulator runs of one repeat (a realistic CI sample).

A suite of one mixed cell (36 prompts over three categories, 128-token outputs,
concurrency 4, acceptance (0.8, 0.75, 0.7)) makes the baseline. Then: a run differing only
in the emulator's seed passes, every figure decided by the significance test; a draft
with conditional acceptance (0.6, 0.55, 0.5) (true AL 2.07 instead of 2.82) fails on AL
with its interval shown; the same baseline with its errors stripped (a file saved before
errors were stored) falls back to the older rule row by row; a 4-prompt run has no noise
estimate. `baseline save` warns that 36 prompts cannot resolve every 2% tolerance.
"""

from __future__ import annotations

import json
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from harness import run_cli, run_suite, workload, write_prompt_suite

CELL = "eagle3/data/c4"


def write_suite(folder: Path, prompts: int) -> Path:
    return write_prompt_suite(
        folder,
        name="gate-significance",
        model=f"emu-sig-{uuid.uuid4().hex[:10]}",
        prompts=prompts,
        label="Significance",
        id_format="s{:02d}",
        workloads=workload("data.jsonl", [4], 128),
    )


def junit_rows(path: Path) -> dict[str, tuple[str, str]]:
    """metric → (outcome, message) of a JUnit file of one cell."""
    rows = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        kinds = [c for c in case if c.tag in ("failure", "error", "skipped")]
        outcome = kinds[0].tag if kinds else "passed"
        message = kinds[0].get("message") if kinds else (case.findtext("system-out") or "")
        rows[case.get("name")] = (outcome, message)
    return rows


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(suite, baseline JSON, stderr of `baseline save`)."""
    folder = tmp_path_factory.mktemp("significance")
    suite = write_suite(folder, 36)
    results = run_suite(suite, folder / "baseline-results")
    baseline = folder / "baseline.json"
    saved = run_cli("baseline", "save", results, "--out", baseline)
    assert saved.returncode == 0, saved.stderr
    return suite, baseline, saved.stderr


def test_baseline_stores_errors_and_warns_that_it_is_small(campaign):
    _, baseline, stderr = campaign
    cell = json.loads(baseline.read_text())["cells"][CELL]
    al = cell["metrics"]["acceptance_length"]
    # ~1,600 steps: the AL's error is ~0.43 / √1600 × 2.8 ≈ 0.03.
    assert 0.01 < al["se"] < 0.06 and al["conversations"] == 36
    assert cell["categories"]["writing"]["acceptance_length"]["se"] > al["se"]
    assert "cannot resolve their tolerance" in stderr
    assert "acceptance_length[" in stderr and "conversations per cell would" in stderr


# Quiet: it compares the timing of two runs taken minutes apart. Under the xdist workers'
# load (`make coverage`, 2026-12-07) the seed-only rerun's median TTFT was 24.66 ms against
# the baseline's 20.04 (+23%, the emulator's prefill is 20 ms), a regime of the loaded
# machine that neither run's within-run error (se 0.23 and 1.4 ms) can see, so the gate
# called it significant (p = 0.0009 at α / m = 0.0042). It passed in three fresh-clone
# `make test` runs the same day; alone, the two runs share the machine's state.
@pytest.mark.quiet
def test_a_seed_only_rerun_passes_and_a_clear_regression_fails(campaign, tmp_path):
    suite, baseline, _ = campaign
    rerun = run_suite(suite, tmp_path / "seed", "target.emulator.seed=2")
    result = run_cli("gate", rerun, "--baseline", baseline, "--junit", tmp_path / "seed.xml")
    assert result.returncode == 0, result.stderr
    rows = junit_rows(tmp_path / "seed.xml")
    assert {outcome for outcome, _ in rows.values()} == {"passed"}
    tested = [m for m, (_, message) in rows.items() if "decided by significance" in message]
    # AL, official AL, 3 positions, 3 categories, throughput, TTFT, E2E, interactivity: 12.
    assert len(tested) == 12, rows
    assert "α / m = 0.05 / 12" in result.stdout

    worse = run_suite(
        suite, tmp_path / "worse", "servers.eagle3.emulator.acceptance=[0.6, 0.55, 0.5]"
    )
    junit = tmp_path / "worse.xml"
    failed = run_cli("gate", worse, "--baseline", baseline, "--junit", junit)
    assert failed.returncode == 1, failed.stderr
    outcome, message = junit_rows(junit)["acceptance_length"]
    assert outcome == "failure" and "decided by significance" in message
    # (2.07 − 2.82) / 2.82 = −27%, its whole interval below zero.
    change = message.split("change ")[1].split(" [")[0]
    assert -32.0 < float(change.rstrip("%")) < -22.0
    low, high = message.split(" [")[1].split("]")[0].split(", ")
    assert float(low.rstrip("%")) < float(high.rstrip("%")) < 0


def test_an_older_baseline_falls_back_row_by_row(campaign, tmp_path):
    suite, baseline, _ = campaign
    data = json.loads(baseline.read_text())
    for cell in data["cells"].values():
        for stats in [*cell["metrics"].values()] + [
            s for category in cell["categories"].values() for s in category.values()
        ]:
            for key in ("se", "se_note", "conversations"):
                stats.pop(key, None)
    older = tmp_path / "older.json"
    older.write_text(json.dumps(data))
    rerun = run_suite(suite, tmp_path / "rerun", "target.emulator.seed=3")
    junit = tmp_path / "older.xml"
    result = run_cli("gate", rerun, "--baseline", older, "--junit", junit)
    assert result.returncode in (0, 1), result.stderr
    rows = junit_rows(junit)
    gated = {m: message for m, (_, message) in rows.items() if m != "num_failed"}
    assert gated and all(
        "baseline without stored errors (older file): older rule" in m for m in gated.values()
    )


def test_four_conversations_have_no_noise_estimate(tmp_path):
    suite = write_suite(tmp_path, 4)
    results = run_suite(suite, tmp_path / "tiny")
    summary = next((tmp_path / "tiny").rglob("summary.json"))
    errors = json.loads(summary.read_text())["standard_errors"]
    assert errors["figures"] == {} and errors["note"] == (
        "no noise estimate: 4 conversations (< 5)"
    )
    baseline = tmp_path / "tiny.json"
    assert run_cli("baseline", "save", results, "--out", baseline).returncode == 0
    junit = tmp_path / "tiny.xml"
    run_cli("gate", results, "--baseline", baseline, "--junit", junit)
    message = junit_rows(junit)["acceptance_length"][1]
    assert "baseline: no noise estimate: 4 conversations (< 5)" in message
