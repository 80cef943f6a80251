"""`specbench baseline save` and `specbench gate` end to end on real emulator campaigns.

A suite of two cells (a mixed coding+math cell of 40 prompts and a writing-only cell of
20, concurrency 8, 256-token outputs, 3 repeats) runs on the emulator with acceptance
(0.8, 0.75, 0.7) to make the baseline. Then: the same seed passes; other seeds (pure
run-to-run noise) pass every default rule; a worse draft (0.7, 0.65, 0.6) fails on AL
with exit 1; a missing cell exits 2. Failed requests are shown with `specbench bench`
against emulator processes.

Timings: prefill_ms = step_ms = 10, so that the emulator's own clock, not the client
sharing 2 cores, sets throughput and latency. Equal prefill and decode steps matter for
TTFT: a request waits for whatever step is running, then its prefill, so its TTFT is
spread evenly over 10–20 ms. With a prefill much longer than a step (40 vs 8 ms), a
request arriving during another's prefill waits twice as long, and the median TTFT of a
repeat jumps between ~45 and ~85 ms (measured): noise no gate tolerance should absorb.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from harness import (
    DATA,
    run_cli,
    run_on_terminal,
    run_suite,
    running_emulator,
    workload,
    write_prompt_suite,
)

REGRESSED = (0.7, 0.65, 0.6)
MIXED_CELL = "eagle3/data+coding+math/c8"
WRITING_CELL = "eagle3/data+writing/c8"


def write_suite(folder: Path) -> Path:
    """60 prompts, 20 per category; a mixed coding+math workload and a writing one."""
    tag = uuid.uuid4().hex[:10]  # unique served model name: finds this test's servers in `ps`
    return write_prompt_suite(
        folder,
        name="gate-emu",
        model=f"emu-gate-{tag}",
        prompts=60,
        label="Gate fixture",
        id_format="g{:02d}",
        workloads=workload("data.jsonl", [8], 256, categories=["coding", "math"])
        + workload("data.jsonl", [8], 256, categories=["writing"]),
        repeats=3,
    )


def gate(results: Path, baseline: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli("gate", results, "--baseline", baseline, *args)


def junit_cases(path: Path) -> dict[tuple[str, str], str]:
    """(cell, metric) → outcome (passed, failure, error, skipped) of a JUnit file."""
    root = ET.parse(path).getroot()
    outcomes = {}
    for case in root.iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[(case.get("classname"), case.get("name"))] = kinds[0] if kinds else "passed"
    return outcomes


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(suite, baseline results dir, baseline JSON) from acceptance (0.8, 0.75, 0.7)."""
    folder = tmp_path_factory.mktemp("gate")
    suite = write_suite(folder)
    results = run_suite(suite, folder / "baseline-results")
    baseline = folder / "baselines" / "emu.json"
    saved = run_cli("baseline", "save", results, "--out", baseline)
    assert saved.returncode == 0, saved.stderr
    return suite, results, baseline


def test_baseline_file_is_self_describing(campaign):
    _, results, baseline = campaign
    data = json.loads(baseline.read_text())
    assert data["kind"] == "specbench-baseline" and data["schema_version"] == 2
    assert data["specbench_version"] and data["created_at"].endswith("+00:00")
    assert data["source_results_dir"] == str(results.resolve())
    assert data["suite"]["name"] == "gate-emu" and len(data["suite"]["suite_hash"]) == 64
    assert data["servers"]["eagle3"]["speculative"]["method"] == "eagle3"
    assert data["servers"]["eagle3"]["engine"] == "emulator"
    assert sorted(data["cells"]) == [MIXED_CELL, WRITING_CELL]
    mixed = data["cells"][MIXED_CELL]
    al = mixed["metrics"]["acceptance_length"]
    expected = 1 + 0.8 + 0.8 * 0.75 + 0.8 * 0.75 * 0.7  # 2.82, the emulator's true AL
    assert al["n"] == 3 and abs(al["value"] - expected) < 0.05 and al["std"] > 0
    assert sorted(mixed["categories"]) == ["coding", "math"]
    assert data["cells"][WRITING_CELL]["categories"] == {}


@pytest.fixture(scope="module")
def regressed(campaign, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repeat of a worse draft, acceptance (0.7, 0.65, 0.6)."""
    suite, _, _ = campaign
    return run_suite(
        suite,
        tmp_path_factory.mktemp("regressed") / "results",
        f"servers.eagle3.emulator.acceptance={list(REGRESSED)}",
        "repeats=1",
    )


def test_worse_draft_fails_on_acceptance_length(campaign, regressed, tmp_path):
    _, _, baseline = campaign
    current = regressed
    junit = tmp_path / "gate.xml"
    summary = tmp_path / "summary.md"
    result = gate(current, baseline, "--junit", junit, "--summary", summary)
    assert result.returncode == 1, result.stderr
    assert "\nREGRESSION  " in result.stdout and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1  # the findings are on stdout, a line each
    cases = junit_cases(junit)
    for cell in (MIXED_CELL, WRITING_CELL):
        assert cases[(cell, "acceptance_length")] == "failure"
        assert cases[(cell, "per_position_acceptance_1")] == "failure"
        assert cases[(cell, "num_failed")] == "passed"
    assert cases[(MIXED_CELL, "acceptance_length[coding]")] == "failure"
    assert cases[(MIXED_CELL, "acceptance_length[math]")] == "failure"
    root = ET.parse(junit).getroot()
    failures = sum(1 for outcome in cases.values() if outcome == "failure")
    assert int(root.get("failures")) == failures == len(root.findall(".//failure"))
    assert int(root.get("errors")) == 0 and int(root.get("tests")) == len(cases)
    markdown = summary.read_text()
    assert markdown.startswith("### ❌ specbench gate: regression")
    assert "acceptance_length" in markdown and "servers.eagle3" in markdown
    # The change shown is the real one: (2.43 - 2.82) / 2.82 ≈ -14%.
    al_row = next(
        line for line in markdown.splitlines() if f"| {MIXED_CELL} | acceptance_length |" in line
    )
    change = float(al_row.split("|")[5].split("[")[0].strip().rstrip("%"))
    assert -17.0 < change < -11.0


def test_a_100_column_terminal_shows_each_regression_on_one_whole_line(
    campaign, regressed, tmp_path
):
    """Issue 42: the gate at 100 columns printed 214 lines, every number cut to `2…`. Now
    each finding is one row that fits, its figures whole, and the last line says where
    every check is; the files still hold every check."""
    _, _, baseline = campaign
    json_file = tmp_path / "gate.json"
    shown = run_on_terminal(
        "gate", regressed, "--baseline", baseline, "--json", json_file, columns=100
    )
    assert shown.returncode == 1, shown.output
    lines = shown.lines
    print(f"\ngate at 100 columns: {len(lines)} lines\n{shown.output}")  # noqa: T201 (-s)
    assert max(len(line) for line in lines) <= 100
    checks = json.loads(json_file.read_text())["checks"]
    assert len(checks) == 12 + 10  # every check of both cells in the file, listed or not
    failing = [c for c in checks if c["verdict"] == "regression"]
    rows = {
        (row.split()[1], row.split()[2]): row.split() for row in lines if row.startswith("REGR")
    }
    assert len(rows) == len(failing) >= 8
    for check in failing:  # the cell's workload shown without the words both share, `data+`
        cell = check["cell"].replace("/data+", "/")
        row = rows[(cell, check["metric"])]
        assert float(row[3].replace(",", "")) == pytest.approx(check["baseline"], rel=1e-3)
        assert float(row[4].replace(",", "")) == pytest.approx(check["current"], rel=1e-3)
        assert row[5] == f"{check['relative_change'] * 100:+.1f}%" and row[6] == check["tolerance"]
    assert "…" not in shown.output  # nothing cut
    assert "workloads shown without `data+`" in shown.output
    tail = " ".join(" ".join(lines[-3:]).split())
    assert f"every check in full: {json_file}" in tail
    assert f"{len(checks)} checks: {len(failing)} REGRESSION" in tail
    assert len(lines) <= len(failing) + 30  # was 214 with the full table


def as_launches(results: Path, out: Path, repeats: int = 3) -> Path:
    """A copy of `results` whose repeat r<M> of every cell (M < `repeats`) is launch M:
    copied to c<N>/l<M>/r0 with its summary's `launch` = M and `repeat` = 0."""
    out.mkdir(parents=True)
    shutil.copy(results / "manifest.json", out / "manifest.json")
    for summary in sorted(results.glob("*/*/c*/r*/summary.json")):
        cell = summary.parent
        launch = int(cell.name[1:])
        if launch >= repeats:
            continue
        target = out / cell.relative_to(results).parent / f"l{launch}" / "r0"
        shutil.copytree(cell, target)
        data = json.loads(summary.read_text())
        (target / "summary.json").write_text(json.dumps({**data, "launch": launch, "repeat": 0}))
    return out


def test_three_launches_a_side_are_judged_on_launch_values(campaign, tmp_path):
    """Both sides' three repeats stand in for three server launches: each repeat's folder is
    copied to c8/l<M>/r0 with its summary's `launch` set to M (`launches = N` in a suite is
    not on this branch; the gate reads the launch from the summary, not the folder). A
    worse draft fails AL on launch values, and every output names the rule; one launch of
    it against the same baseline falls back to the within-launch rule and says so."""
    suite, results, _ = campaign
    launches = as_launches(results, tmp_path / "baseline-launches")
    baseline = tmp_path / "launches.json"
    saved = run_cli("baseline", "save", launches, "--out", baseline)
    assert saved.returncode == 0, saved.stderr
    data = json.loads(baseline.read_text())
    mixed = data["cells"][MIXED_CELL]
    assert data["schema_version"] == 2 and mixed["launches"] == 3 and mixed["repeats"] == 3
    assert sorted(mixed["metrics"]["acceptance_length"]["launch_values"]) == ["0", "1", "2"]
    assert sorted(mixed["categories"]["coding"]["acceptance_length"]["launch_values"]) == [
        "0",
        "1",
        "2",
    ]
    same = gate(launches, baseline, "--junit", tmp_path / "same.xml")
    assert same.returncode == 0, same.stdout + same.stderr
    assert set(junit_cases(tmp_path / "same.xml").values()) == {"passed"}

    regressed = run_suite(
        suite, tmp_path / "regressed", f"servers.eagle3.emulator.acceptance={list(REGRESSED)}"
    )
    current = as_launches(regressed, tmp_path / "regressed-launches")
    junit, summary = tmp_path / "gate.xml", tmp_path / "summary.md"
    result = gate(current, baseline, "--junit", junit, "--summary", summary)
    assert result.returncode == 1, result.stderr
    rule = "launches (3 vs 3, median/MAD, material 2%)"
    cases = junit_cases(junit)
    for cell in (MIXED_CELL, WRITING_CELL):
        assert cases[(cell, "acceptance_length")] == "failure"
    assert cases[(MIXED_CELL, "acceptance_length[coding]")] == "failure"
    failures = {
        (case.get("classname"), case.get("name")): case.find("failure").get("message")
        for case in ET.parse(junit).getroot().iter("testcase")
        if case.find("failure") is not None
    }
    assert f"rule: {rule}" in failures[(MIXED_CELL, "acceptance_length")]
    markdown = summary.read_text()
    al_row = next(
        line for line in markdown.splitlines() if f"| {MIXED_CELL} | acceptance_length |" in line
    )
    assert "(median of 3 launches, σ" in al_row and f"{rule}: beyond noise" in al_row
    assert -17.0 < float(al_row.split("|")[5].strip().rstrip("%")) < -11.0
    assert f"listed checks judged by: {rule} (" in result.stdout  # the terminal's findings
    print(f"\nlaunch-level AL row: {al_row}")  # noqa: T201 (the figures, with `pytest -s`)

    one = as_launches(regressed, tmp_path / "one-launch", repeats=1)
    fallback = gate(one, baseline, "--junit", tmp_path / "one.xml")
    assert fallback.returncode == 1, fallback.stderr
    message = next(
        case.find("failure").get("message")
        for case in ET.parse(tmp_path / "one.xml").getroot().iter("testcase")
        if (case.get("classname"), case.get("name")) == (MIXED_CELL, "acceptance_length")
    )
    assert "rule: within-launch (launches 3 vs 1: fewer than 3 on a side)" in message


# Quiet: under the xdist run (the demo's three vLLM servers beside it) one fresh-clone CI
# measured the same eagle3 c8 cell's median TTFT at 21.2 ms then 30.3 ms (+42%), a regime
# of the loaded machine, not of the server; alone it stays inside the 10% tolerance. The
# lanes this replaced ran it last for the same reason.
#
# The baseline, the rerun and the three seeds run at once, five campaigns side by side:
# each is an emulator and a client that wait on the emulator's 10 ms steps (four of them
# used 33 s of CPU in 176 s of wall when run one after the other), so side by side they do
# not crowd two cores the way the xdist run does. Measured on this machine, alone: every
# relative change stayed within ±1.8% (median TTFT within +1.1%) one after the other and
# within ±1.8% (median TTFT within ±0.9%) side by side; the test's call went 140 s → 38 s.
# The baseline is measured here rather than taken from the module's `campaign` fixture:
# `make test` runs this test in a pytest of its own, where that fixture was built a second
# time, alone, before the four (37.7 s of the quiet run's 110.6 s in one run).
@pytest.mark.quiet
def test_same_settings_pass_and_noise_across_seeds_stays_inside_tolerances(tmp_path):
    suite = write_suite(tmp_path)
    runs = {"baseline": (), "rerun": ()}
    runs |= {f"seed{seed}": (f"target.emulator.seed={seed}",) for seed in (2, 3, 4)}
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        done = {
            name: pool.submit(run_suite, suite, tmp_path / name, *overrides)
            for name, overrides in runs.items()
        }
        results = {name: future.result() for name, future in done.items()}
    baseline = tmp_path / "baseline.json"
    saved = run_cli("baseline", "save", results["baseline"], "--out", baseline)
    assert saved.returncode == 0, saved.stderr
    result = gate(results["rerun"], baseline, "--junit", tmp_path / "rerun.xml")
    assert result.returncode == 0, result.stderr
    assert set(junit_cases(tmp_path / "rerun.xml").values()) == {"passed"}

    figures: dict[str, list[float]] = {}
    for seed in (2, 3, 4):
        current = results[f"seed{seed}"]
        junit = tmp_path / f"seed{seed}.xml"
        summary = tmp_path / f"seed{seed}.md"
        result = gate(current, baseline, "--junit", junit, "--summary", summary)
        assert result.returncode == 0, result.stdout + result.stderr
        cases = junit_cases(junit)
        assert set(cases.values()) == {"passed"}
        assert len(cases) == 2 * 10 + 2  # 10 checks per cell, + AL of 2 categories
        for line in summary.read_text().splitlines():
            parts = [p.strip() for p in line.split("|")]
            change = parts[5].split(" [")[0] if len(parts) > 6 else ""
            if change.endswith("%"):
                figures.setdefault(f"{parts[1]} {parts[2]}", []).append(float(change[:-1]))
    # The figures the README quotes: shown with `pytest -s`, asserted nowhere else.
    print("\nrelative change vs baseline over seeds 2, 3, 4 (%):")  # noqa: T201
    for name, changes in sorted(figures.items()):
        print(f"  {name}: {', '.join(f'{c:+.2f}' for c in changes)}")  # noqa: T201


def bench(base: str, out: Path, *args: str) -> Path:
    result = run_cli(
        "bench", "--endpoint", base, "--dataset", DATA, "--concurrency", "4",
        "--max-tokens", "64", "--label", "eagle3", "--output", out, *args,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out


def test_failed_requests_fail_the_gate(campaign, tmp_path):
    """Bench results (no suite): a server whose 300 ms prefills stall the stream for longer
    than the client's 0.55 s read timeout when one waits behind another (600 ms and more)
    fails some requests, never all. The timeout was 0.4 s: a request behind its own prefill
    alone then had 100 ms to spare, and under `make coverage` beside the xdist load every
    request timed out and the cell failed whole (2026-12-07). At 0.55 s it has 250 ms; a
    request behind two prefills still misses by 50 ms or more, and only more on a slower
    machine. Measured here: 6 of 14 failed, alone and under coverage (10 of 14 at 0.4 s)."""
    emulated = ["--model", "emu", "--acceptance", "0.8,0.75,0.7", "--step-ms", "6", "--seed", "1"]
    with running_emulator(*emulated, "--prefill-ms", "40") as base:
        before = bench(base, tmp_path / "before")
    baseline = tmp_path / "baseline.json"
    assert run_cli("baseline", "save", before, "--out", baseline).returncode == 0
    with running_emulator(*emulated, "--prefill-ms", "300") as base:
        after = bench(base, tmp_path / "after", "--request-timeout", "0.55")
    summary = json.loads((after / "eagle3" / "tiny" / "c4" / "r0" / "summary.json").read_text())
    assert 0 < summary["num_failed"] < summary["num_requests"]

    junit = tmp_path / "gate.xml"
    result = gate(after, baseline, "--junit", junit)
    assert result.returncode == 1, result.stderr
    assert junit_cases(junit)[("eagle3/tiny/c4", "num_failed")] == "failure"
    assert "no suite in either manifest" in result.stdout
    # Failed requests alone fail the gate: a rules file keeping only that rule.
    rules = tmp_path / "gate.toml"
    rules.write_text(
        'replace_defaults = true\n[metrics.num_failed]\ndirection = "lower"\nmax = 0\n'
    )
    only_failures = gate(after, baseline, "--rules", rules)
    assert only_failures.returncode == 1, only_failures.stderr
    # The terminal's findings table: one whole row for the one check (verdict, cell, metric,
    # baseline, current).
    [row] = [line for line in only_failures.stdout.splitlines() if "num_failed" in line]
    assert row.split()[:5] == [
        "REGRESSION",
        "eagle3/tiny/c4",
        "num_failed",
        "0",
        str(summary["num_failed"]),
    ]
    assert gate(before, baseline, "--rules", rules).returncode == 0
    # Bench results are not the campaign's suite: bad input, naming both.
    other = gate(after, campaign[2])
    assert other.returncode == 2, other.stderr
    assert "from suite 'gate-emu', the results from suite None" in other.stderr


def test_missing_cell_exits_2_and_is_reported(campaign, tmp_path):
    _, results, baseline = campaign
    partial = tmp_path / "partial"
    shutil.copytree(results, partial)
    shutil.rmtree(partial / "eagle3" / "data+writing")
    junit = tmp_path / "gate.xml"
    summary = tmp_path / "summary.md"
    result = gate(partial, baseline, "--junit", junit, "--summary", summary)
    assert result.returncode == 2, result.stderr
    assert f"missing from {partial} (failed or not run): {WRITING_CELL}" in result.stderr
    cases = junit_cases(junit)
    assert {o for (cell, _), o in cases.items() if cell == WRITING_CELL} == {"error"}
    assert {o for (cell, _), o in cases.items() if cell == MIXED_CELL} == {"passed"}
    assert "baseline cells missing" in summary.read_text()
