"""The fault cases' checks can fail: a command that holds is refused by them, and saved cells
that disagree with their records are data loss. (Not fault cases: no `faults` marker.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fault_checks import DATA_LOSS, assert_consistent, assert_refused, saved_cell_problems
from fault_scratch import Scratch


def test_a_command_that_holds_fails_the_bad_input_check(scratch: Scratch) -> None:
    # A valid dry run checked as if it were bad input.
    folder = scratch.dir("dry")
    suite, _ = scratch.suite(folder)
    outcome = scratch.cli("run", suite, "--dry-run")
    assert outcome.code == 0, outcome.stderr
    with pytest.raises(AssertionError, match=r"exit 0, expected \(2,\)"):
        assert_refused(outcome, "nothing", folder / "o")


def test_saved_cells_that_disagree_with_their_records_are_data_loss(tmp_path: Path) -> None:
    cell = tmp_path / "cell"
    cell.mkdir()
    (cell / "summary.json").write_text(json.dumps({"num_requests": 3, "num_failed": 0}))
    (cell / "requests.jsonl").write_text('{"error_type": null}\n{"error_type": "SystemExit"}\n')
    problems = saved_cell_problems(tmp_path)
    assert len(problems) == 2
    assert "2 records (1 failed) but the summary counts 3 (0 failed)" in problems[0]
    assert "saved with requests the harness broke: ['SystemExit']" in problems[1]
    with pytest.raises(AssertionError, match=f"^{DATA_LOSS}"):
        assert_consistent(tmp_path)
