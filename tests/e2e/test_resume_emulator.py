"""Resuming into a results directory, end to end with emulator servers (run/resume.py).

A refused run leaves nothing that blocks the corrected one; a sweep grows in place (only
the new cells are measured, the earlier cells' files stay byte for byte); a changed
measured field is one line; a directory written by specbench before this rule resumes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from harness import DATA, REPO, one_line, run_cli, write_campaign_suite

#: A results directory written by main's code at 7b6eecf (before per-cell resuming):
#: `specbench run` of harness.write_campaign_suite's suite, c = 1, 4, one repeat.
#: Its absolute dataset path is stored as @DATA@ (written on another checkout).
OLD_RESULTS = REPO / "tests" / "fixtures" / "runs" / "resume-7b6eecf"


def cell_files(root: Path) -> dict[str, str]:
    """sha256 of every file in every cell folder (`server/workload/cN/rM/*`)."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.glob("*/*/c*/r*/*"))
    }


def measured(root: Path) -> list[str]:
    return json.loads((root / "manifest.json").read_text())["runs"][-1]["cells_measured"]


def test_a_refused_run_leaves_nothing_that_blocks_the_corrected_one(tmp_path):
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=32)
    out = tmp_path / "results"
    bad_data = run_cli(
        "run", suite, "--output", out, "--server", "eagle3",
        "--set", "workloads.0.num_prompts=100", "--set", "workloads.0.strict=true",
    )  # fmt: skip
    assert bad_data.returncode == 2, bad_data.stderr
    assert "--num-prompts 100 exceeds the 12 rows available" in one_line(bad_data.stderr)
    typo = run_cli(
        "run", suite, "--output", out, "--server", "eagle3",
        "--endpoint", "eagle3=http://127.0.0.1:9",
    )  # fmt: skip
    assert typo.returncode == 2, typo.stderr
    assert not (out / "manifest.json").exists()  # neither refusal bound the folder
    # The corrected run differs in a measured field from the refused ones: it runs.
    fixed = run_cli(
        "run", suite, "--output", out, "--server", "eagle3", "--set", "workloads.0.max_tokens=16"
    )
    assert fixed.returncode == 0, fixed.stderr
    assert measured(out) == ["eagle3/tiny/c1/r0"]


def test_a_sweep_grows_in_place_and_the_first_runs_files_stay_byte_identical(tmp_path):
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1, 4), max_tokens=16)
    out = tmp_path / "results"
    first = run_cli("run", suite, "--output", out)
    assert first.returncode == 0, first.stderr
    assert "4 cells measured, 0 already complete" in first.stdout
    before = cell_files(out)
    assert len(before) == 4 * 5  # summary, requests, two scrapes, window samples per cell

    grown = run_cli(
        "run", suite, "--output", out,
        "--set", "workloads.0.concurrency=[1, 4, 16]", "--set", "repeats=2",
        "--set", 'description="the sweep, one point and one repeat more"',
    )  # fmt: skip
    assert grown.returncode == 0, grown.stderr
    assert "8 cells measured, 4 already complete, 0 failed" in grown.stdout
    assert sorted(measured(out)) == sorted(
        f"{server}/tiny/{cell}"
        for server in ("baseline", "eagle3")
        for cell in ("c16/r0", "c1/r1", "c4/r1", "c16/r1")
    )
    after = cell_files(out)
    assert {path: after[path] for path in before} == before  # the first run's files, intact
    assert len(after) == 12 * 5

    changed = run_cli(
        "run",
        suite,
        "--output",
        out,
        "--set",
        "servers.eagle3.speculative.num_speculative_tokens=2",
    )
    assert changed.returncode == 2
    assert one_line(changed.stderr) == (
        f"error: {out}: server 'eagle3' was measured here with "
        "speculative.num_speculative_tokens=3, this run asks 2; give the server a new name (its "
        "[servers.NAME] table), measure its cells again with --force, or use a new --output"
    )
    assert cell_files(out) == after


def test_a_results_directory_written_before_per_cell_resuming_still_resumes(tmp_path):
    out = tmp_path / "results"
    shutil.copytree(OLD_RESULTS / "results", out)
    for path in [out / "manifest.json", *out.rglob("summary.json")]:
        path.write_text(path.read_text().replace("@DATA@", str(DATA)))
    suite = tmp_path / "suite.toml"
    suite.write_text((OLD_RESULTS / "suite.toml").read_text().replace("@DATA@", str(DATA)))
    before = cell_files(out)
    assert len(before) == 4 * 4  # written before window samples: four files per cell

    grown = run_cli("run", suite, "--output", out, "--set", "workloads.0.concurrency=[1, 4, 16]")
    assert grown.returncode == 0, grown.stderr
    assert "2 cells measured, 4 already complete, 0 failed" in grown.stdout
    assert sorted(measured(out)) == ["baseline/tiny/c16/r0", "eagle3/tiny/c16/r0"]
    after = cell_files(out)
    assert {path: after[path] for path in before} == before
