"""`status` of a local results directory, read from recorded results (tests/fixtures/runs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from harness import REPO

from specbench.common.errors import SpecbenchError
from specbench.results.status import (
    GroupCells,
    collect_local_status,
    describe_last_run,
    summary_line,
)

RUNS = REPO / "tests" / "fixtures" / "runs"


def test_a_runs_cells_are_counted_against_its_suite(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(RUNS / "main-408c852" / "results", results)
    shutil.rmtree(results / "eagle3" / "conversations" / "c2")  # as if stopped before it
    status = collect_local_status(results)
    assert status.suite_name == "main-408c852"
    assert status.groups == (
        GroupCells("baseline", "conversations", 2, 0, 0),
        GroupCells("baseline", "prompts", 1, 0, 0),
        GroupCells("eagle3", "conversations", 1, 0, 1),
        GroupCells("eagle3", "prompts", 1, 0, 0),
    )
    assert summary_line(status) == (
        f"5/6 cells complete, 0 failed, 1 missing; `specbench run SUITE --output {results}` "
        "measures the 1"
    )
    assert describe_last_run(status.last_run, status.runs) == [
        "last run (1 recorded): run on vm, started 2026-12-05T08:53:04.781+00:00, ended "
        "2026-12-05T08:53:11.670+00:00; completed: 6 cells measured, 0 failed",
        "  command line: /work/main/.venv/bin/specbench run suite.toml --output results",
    ]


def test_bench_results_without_a_suite_count_the_cells_on_disk() -> None:
    status = collect_local_status(RUNS / "tiny-vllm-ngram")
    assert status.suite_name is None
    assert status.groups == (
        GroupCells("baseline", "lossless-prompts", 1, 0, 0),
        GroupCells("ngram", "lossless-prompts", 1, 0, 0),
    )
    assert summary_line(status) == (
        "2/2 cells complete, 0 failed, 0 missing (no suite recorded: only the cells on disk "
        "are counted)"
    )
    (first,) = describe_last_run(status.last_run, status.runs)[:1]
    # This recorded bench run kept no host and no end.
    assert first == (
        "last run (2 recorded): bench on unknown host, started 2026-12-02T10:48:42.160+00:00, "
        "ended not recorded; completed: 0 cells measured, 0 failed"
    )


def test_no_results_directory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SpecbenchError, match=r"nowhere: no such results directory"):
        collect_local_status(tmp_path / "nowhere")
    with pytest.raises(SpecbenchError, match=r"no manifest.json; not a results directory"):
        collect_local_status(tmp_path)
    assert describe_last_run(None, 0) == ["last run: none recorded"]
