"""The fault sweep (tools/fault_sweep.py) runs: a handful of its cases, end to end.

Keeps the tool from rotting: each case below injects its fault or input through the tool's
own functions and must pass; a case built to be wrong must fail, so the checks can fail.
The cases are ones that start no server: the faults that need one (signals mid-start, a
broken stream through the fault proxy) are injected by their named tests with the same
harness (tests/e2e/test_faults_emulator.py, test_launch_emulator.py), and the full sweep
(`python tools/fault_sweep.py`, docs/faults.md) runs them all.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from harness import REPO

spec = importlib.util.spec_from_file_location("fault_sweep", REPO / "tools" / "fault_sweep.py")
assert spec is not None and spec.loader is not None
sweep = importlib.util.module_from_spec(spec)
sys.modules["fault_sweep"] = sweep  # dataclasses look their module up by name
spec.loader.exec_module(sweep)

CASES = (
    "binary summary.json, then `report`",
    "binary manifest.json, then `report`",
    "bench --concurrency '99999999999999999999'",
    "suite: malformed TOML",
    "suite: a second workload's dataset has placeholder rows",
    "lossless on a missing folder",
)


def test_a_handful_of_sweep_cases_pass_and_the_totals_count_them(tmp_path: Path) -> None:
    results = sweep.sweep_cases(sweep.named(*CASES), tmp_path)
    assert [(r.name, r.status, r.problems) for r in results] == [(n, "pass", []) for n in CASES]
    assert results[0].observed.startswith("exit 2; error: ")
    assert "summary.json" in results[0].observed and "manifest.json" in results[1].observed
    totals = sweep.totals(results)
    assert totals == {
        "faults": {"passed": 2, "run": 2, "skipped": 0},
        "inputs": {"passed": 4, "run": 4, "skipped": 0},
        "data_loss_cases": 0,
    }
    table = sweep.markdown(results, totals)
    assert "Faults survived: 2/2" in table and "Bad inputs with a clean error: 4/4" in table
    assert table.count("\n| F") == 2 and table.count("\n| I") == 4
    # Every case's row names the test that injects the same fault, where there is one.
    assert "test_corrupt_results.py::test_a_corrupt_manifest_is_one_line_with_what_to_do" in table


def test_a_case_that_does_not_hold_fails_and_says_why(tmp_path: Path) -> None:
    # A valid command checked as if it were bad input: the tool must call it a failure.
    wrong = sweep.Case(
        "I99",
        "input",
        "a dry run expected to be refused",
        "exit 2",
        "",
        lambda s, check: check.clean_exit(
            s.cli("run", s.suite(s.dir("dry"))[0], "--dry-run"), (2,), "nothing"
        ),
    )
    (result,) = sweep.sweep_cases([wrong], tmp_path)
    assert result.status == "fail"
    assert "exit 0, expected (2,)" in result.problems
    assert "the message lacks 'nothing'" in result.problems
    # And saved cells that disagree with their records are data loss.
    cell = tmp_path / "cell"
    cell.mkdir()
    (cell / "summary.json").write_text(json.dumps({"num_requests": 3, "num_failed": 0}))
    (cell / "requests.jsonl").write_text('{"error_type": null}\n{"error_type": "SystemExit"}\n')
    problems = sweep.saved_cell_problems(tmp_path)
    assert len(problems) == 2
    assert "2 records (1 failed) but the summary counts 3 (0 failed)" in problems[0]
    assert "saved with requests the harness broke: ['SystemExit']" in problems[1]
