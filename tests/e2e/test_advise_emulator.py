"""`specbench advise` end to end on a K sweep of emulator servers whose time model prices K
(issue 40): at c = 1 verification is free and K = 3 wins; at c = 4 every verified token
past the knee costs 5 ms and the baseline wins. The report writes the same advice as
`report/advice.json`; bad input is one line and exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import one_line, run_cli, write_campaign_suite

#: `make test` runs these alone, last: the picks compare throughput between
#: configs measured minutes apart. Beside six xdist workers on two cores, one launch of a
#: cell ran so much slower than its others that the tie rule, rightly, could not tell
#: K 3 from K 1 at c = 1, though K 3 leads by 29% in the steady state.
pytestmark = pytest.mark.quiet

K_SET = "servers.eagle3.num_speculative_tokens"
#: The pick's tests relax the launch-spread exclusion (a loaded machine; see the first test).
LOOSE = ("--max-launch-spread", "0.5")
#: 10 ms steps (the emulator's clock, not a loaded client, sets the rates: see
#: harness.suite.GATE_TIMINGS); K priced: 0.05 ms per drafted position, 5 ms per verified
#: token past 4 per step; every draft position accepted with probability 0.95. Steady-state
#: truth (emulator/truth.py): c = 1, K = 3 is 29% ahead of K = 2; c = 4, the baseline is
#: 1.53× K = 1. (With the harness's 0.8, 0.75, 0.7, K 3 led K 2 by 17%, and under make
#: test's load the tie rule once took K 2 at c = 1.)
PRICED = (
    "servers.eagle3.emulator.acceptance=[0.95, 0.95, 0.95]",
    "target.emulator.step_ms=10.0",
    "target.emulator.prefill_ms=10.0",
    "target.emulator.draft_step_ms=0.05",
    "target.emulator.verify_token_ms=5.0",
    "target.emulator.compute_knee_tokens=4",
)


def sets(*overrides: str) -> list[str]:
    return [arg for override in overrides for arg in ("--set", override)]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """K = 1, 2, 3 and the baseline at c = 1 and 4, three launches each (with two, the t
    quantile of 12.7 ties nearly anything)."""
    folder = tmp_path_factory.mktemp("advise")
    suite, _ = write_campaign_suite(folder, concurrency=(1, 4), max_tokens=32)
    out = folder / "results"
    ran = run_cli("run", suite, "--output", out, *sets(f"{K_SET}=[1, 2, 3]", "launches=3", *PRICED))
    assert ran.returncode == 0, ran.stderr
    return suite, out


@pytest.fixture
def sweep(campaign: tuple[Path, Path]) -> Path:
    """The sweep's results (shared: tests that add cells copy them first)."""
    return campaign[1]


def test_advise_picks_the_truth_s_k_at_each_concurrency_and_the_report_agrees(
    sweep: Path, tmp_path: Path
) -> None:
    # Launches that disagree are excluded (tested with --max-launch-spread 0 below); here
    # the pick is under test, and under make test's load one launch of a cell can run
    # >10% slower than its others (a busy neighbour), so the limit is relaxed.
    printed = run_cli("advise", sweep, "--json", *LOOSE)
    assert printed.returncode == 0, printed.stderr
    advice = json.loads(printed.stdout)
    throughput = {
        r["concurrency"]: r for r in advice["recommendations"] if r["objective"] == "throughput"
    }
    assert {c: r["k"] for c, r in throughput.items()} == {1: 3, 4: 0}
    assert throughput[1]["server"] == "eagle3-k3" and throughput[4]["server"] == "baseline"
    assert throughput[1]["launches"] == 3 and throughput[1]["ci_kind"] == "launches"
    assert throughput[1]["ci_low"] < throughput[1]["value"] < throughput[1]["ci_high"]
    assert throughput[1]["gain_vs_k0"] > 0.5  # AL 2.82 at nearly the baseline's step
    assert throughput[4]["gain_vs_k0"] is None  # the baseline itself
    assert {r["objective"] for r in advice["recommendations"]} == {
        "throughput",
        "interactivity",
        "e2e_p90",
    }
    schedule = advice["schedule"]
    assert schedule["method"] == "eagle3" and schedule["num_speculative_tokens"] == 3
    ranges = schedule["num_speculative_tokens_per_batch_size"]
    assert ranges[0][:1] == [1] and ranges[0][2] == 3 and ranges[-1][2] == 0
    assert advice["schedule_notes"]["caveats"] and advice["excluded"] == []

    assert advice["slo"] is None  # no --slo, no [slo] in the suite
    frontier = {(p["server"], p["concurrency"]) for p in advice["frontier"]}
    assert ("eagle3-k3", 1) in frontier and ("baseline", 4) in frontier

    bounded = run_cli("advise", sweep, "--json", "--slo", "ttft_p90=60s", *LOOSE)
    capacity = {c["server"]: c for c in json.loads(bounded.stdout)["slo"]["capacity"]}
    assert set(capacity) == {"baseline", "eagle3-k1", "eagle3-k2", "eagle3-k3"}
    assert {c["basis"] for c in capacity.values()} == {"≥ max measured"}  # 60 s: never broken
    assert capacity["baseline"]["best_under_slo"] is True  # the most tok/s/GPU at c = 4
    unitless = run_cli("advise", sweep, "--slo", "ttft_p90=2")
    assert unitless.returncode == 2 and "has no unit" in one_line(unitless.stderr)

    table = run_cli("advise", sweep, "--objective", "throughput", *LOOSE)
    assert table.returncode == 0, table.stderr
    assert "Throughput against interactivity (Pareto frontier)" in table.stdout
    assert "Which K to ship: tiny, output throughput" in table.stdout
    assert "3 (eagle3-k3)" in table.stdout and "0 (baseline)" in table.stdout
    assert "Per-position acceptance by K: tiny" in table.stdout
    pasted = table.stdout.splitlines()[-1]
    assert pasted == f"--speculative-config '{json.dumps(schedule, separators=(',', ':'))}'"

    report = run_cli("report", sweep, "--out", tmp_path / "report", "--format", "md,json")
    assert report.returncode == 0, report.stderr
    # The report's advice uses the default limit: the same picks unless a launch strayed.
    reported = json.loads((tmp_path / "report" / "advice.json").read_text())
    strict = json.loads(run_cli("advise", sweep, "--json").stdout)
    assert reported == strict
    page = (tmp_path / "report" / "report.md").read_text()
    assert "### Which K to ship: tiny, output throughput" in page
    assert "### K schedule (vLLM num_speculative_tokens_per_batch_size)" in page


def test_advise_refuses_what_it_cannot_choose_in(sweep: Path, tmp_path: Path) -> None:
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
    one_k = tmp_path / "one-k"
    assert run_cli("run", suite, "--output", one_k).returncode == 0
    refused = run_cli("advise", one_k)
    assert refused.returncode == 2
    assert one_line(refused.stderr).endswith(
        "one K measured (K = 3); the advice chooses among two or more: sweep them, e.g. "
        "num_speculative_tokens = [1, 2, 3, 4]"
    )
    no_baseline = tmp_path / "no-baseline"
    ran = run_cli(
        "run",
        suite,
        "--output",
        no_baseline,
        "--server",
        "eagle3-k1",
        "--server",
        "eagle3-k2",
        *sets(f"{K_SET}=[1, 2]"),
    )
    assert ran.returncode == 0, ran.stderr
    refused = run_cli("advise", no_baseline)
    assert refused.returncode == 2 and "no baseline cells" in one_line(refused.stderr)

    mixed = run_cli("advise", sweep, one_k)
    assert mixed.returncode == 2
    assert f"{one_k}: cells of suite" in one_line(mixed.stderr)
    assert "advise one suite's results" in mixed.stderr

    bad = run_cli("advise", sweep, "--objective", "speed")
    assert bad.returncode == 2
    assert one_line(bad.stderr).endswith(
        "--objective 'speed': allowed: throughput, interactivity, e2e_p90"
    )
    # A zero spread limit excludes every cell whose launches differ at all: no advice
    # anywhere, said per point, never a pick from what is left.
    strict = run_cli("advise", sweep, "--json", "--max-launch-spread", "0")
    assert strict.returncode == 0, strict.stderr
    nothing = json.loads(strict.stdout)
    assert nothing["recommendations"] == [] and nothing["schedule"] is None
    assert {(u["concurrency"], u["objective"]) for u in nothing["unresolved"]} == {
        (c, o) for c in (1, 4) for o in ("throughput", "interactivity", "e2e_p90")
    }
    assert all("(> 0%)" in e["reason"] for e in nothing["excluded"])
    printed = run_cli("advise", sweep, "--objective", "throughput", "--max-launch-spread", "0")
    assert "No advice at tiny c=1 (throughput), tiny c=4 (throughput)" in printed.stdout

    missing = run_cli("advise", tmp_path / "nowhere")
    assert missing.returncode == 2 and "no such results directory" in missing.stderr


def test_the_advised_schedule_runs_and_is_compared_with_each_fixed_pick(
    campaign: tuple[Path, Path], tmp_path: Path
) -> None:
    suite, sweep = campaign
    out = tmp_path / "results"
    shutil.copytree(sweep, out)
    # "advised" reads RESULTS/report/advice.json: the one `advise --json` prints (the pick's
    # limit relaxed, as above) stands in for the report's.
    printed = run_cli("advise", out, "--json", *LOOSE)
    assert printed.returncode == 0, printed.stderr
    (out / "report").mkdir(exist_ok=True)
    (out / "report" / "advice.json").write_text(printed.stdout)
    advised = json.loads(printed.stdout)["schedule"]
    grown = tmp_path / "suite.toml"
    server = (
        "[servers.sched]\n"
        'speculative = { method = "eagle3", model = "draft", num_speculative_tokens = 3, '
        f'num_speculative_tokens_per_batch_size = "advised", advised_from = "{out}" }}\n'
        "emulator = { acceptance = [0.8, 0.75, 0.7] }\n"
        'per_request_spec_decode_metrics = "detailed"\n\n'
    )
    grown.write_text(suite.read_text().replace("[[workloads]]", server + "[[workloads]]", 1))
    overrides = sets(f"{K_SET}=[1, 2, 3]", "launches=3", *PRICED)
    dry = run_cli("run", grown, "--output", out, "--dry-run", *overrides)
    assert dry.returncode == 0, dry.stderr
    ranges = json.dumps(advised["num_speculative_tokens_per_batch_size"], separators=(",", ":"))
    assert f"K schedule: sched runs {ranges}" in dry.stdout
    ran = run_cli("run", grown, "--output", out, "--server", "sched", *overrides)
    assert ran.returncode == 0, ran.stderr

    advice = json.loads(
        run_cli("advise", out, "--json", "--objective", "throughput", *LOOSE).stdout
    )
    checks = {c["concurrency"]: c for c in advice["schedule_checks"]}
    assert set(checks) == {1, 4} and {c["server"] for c in checks.values()} == {"sched"}
    # c = 1: one request runs, the schedule's K there is 3, the fixed pick's K.
    assert checks[1]["best_fixed_k"] == 3 and checks[1]["effective_k"] == 3.0
    assert checks[1]["per_step_drafted"] == {"3": checks[1]["per_step_drafted"]["3"]}
    assert checks[1]["verdict"] in {"ties", "wins", "loses"}
    # c = 4: the schedule's K = 0 range still runs the drafter (0 drafts verified), and the
    # fixed pick there is the baseline, which the schedule cannot beat: no speculation at all.
    assert checks[4]["best_fixed_k"] == 0
    assert checks[4]["vs_k0"] is not None and checks[4]["vs_k0"] < 0.05
    table = run_cli("advise", out, "--objective", "throughput")
    assert "The schedule measured: tiny, output throughput" in table.stdout
