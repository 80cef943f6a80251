"""Faults of storage and saved results (F26–F44): a full disk, a read-only or immutable
folder, `--output` a file, corrupt or cut-off result files, a deleted summary or cell,
secrets in a suite, a stale lock.

The disk cases need root (a tmpfs) and `chattr`; elsewhere they are skipped, never passed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from fault_checks import (
    DATA_LOSS,
    assert_clean_exit,
    assert_consistent,
    assert_kept,
    assert_no_leftovers,
)
from fault_scratch import FAULTS_TEST, RECORDED_CELL, FaultCase, Observed, Scratch, case
from harness import fill, in_flight, small_disk, summary_bytes, wait_until

pytestmark = pytest.mark.faults

NO_TMPFS = "cannot mount a tmpfs here (needs root)"
DISK_FULL_TEST = f"{FAULTS_TEST}::test_disk_full_mid_campaign_keeps_cells_and_a_rerun_completes"
CORRUPT_SUMMARY = (
    "tests/unit/cli/test_corrupt_results.py::test_a_corrupt_summary_is_one_line_for_every_reader"
)
CORRUPT = {
    "binary": bytes(range(256)) * 4,
    "wrong-shaped": b'{"schema_version": 2, "label": 5}',
}


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F26",
            "disk full mid-campaign (4 MB tmpfs filled while a cell runs)",
            "exit 2, one line naming the file and `the disk is full`; completed cells kept, no "
            "*.tmp; after freeing space a rerun completes",
            DISK_FULL_TEST,
            server=True,
        )
    ],
)
def test_disk_full_mid_campaign(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    folder = scratch.dir("disk-full")
    suite, tag = scratch.suite(folder, step_ms=6.0, concurrency=(1, 8), max_tokens=48)
    with small_disk(folder / "disk", "4m") as disk:
        if disk is None:
            pytest.skip(NO_TMPFS)
        out = disk / "results"
        process = scratch.popen("run", suite, "--output", out)
        assert wait_until(lambda: summary_bytes(out) and in_flight(out)), "no cell in flight"
        filler = fill(disk)
        outcome = scratch.finish(process)
        observe(outcome)
        assert_clean_exit(outcome, (2,), "the disk is full", one_line=False)
        kept = summary_bytes(out)
        assert not list(out.rglob("*.tmp")), "a half-written *.tmp left behind"
        assert_consistent(out)
        assert_no_leftovers(tag)
        filler.unlink()
        rerun = scratch.rerun(suite, out)
        assert_kept(kept, summary_bytes(out))
        assert len(summary_bytes(out)) == 4, "the rerun did not complete the campaign"
        observe(outcome, f"kept {len(kept)}; rerun exit {rerun.code}")


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F27",
            "disk full during `report`",
            "exit 2, one line `the disk is full`; no 0-byte figure or *.partial left",
            DISK_FULL_TEST,
            server=True,
        )
    ],
)
def test_disk_full_during_report(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    _, results = scratch.campaign_copy("disk-full-report")
    with small_disk(results.parent / "disk", "2m") as disk:
        if disk is None:
            pytest.skip(NO_TMPFS)
        report = disk / "report"
        fill(disk)
        outcome = scratch.cli("report", results, "--out", report)
        observe(outcome)
        assert_clean_exit(outcome, (2,), "the disk is full")
        empty = [p for p in report.rglob("*") if p.is_file() and p.stat().st_size == 0]
        assert not empty, f"0-byte files left: {empty}"
        assert not list(report.rglob("*.partial")), "*.partial left"


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F28",
            "read-only results folder (tmpfs remounted ro)",
            "exit 2, one line `the file system is read-only`, no server started",
            f"{FAULTS_TEST}::test_read_only_results_dir_is_one_line_exit_2",
        )
    ],
)
def test_a_read_only_results_folder(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    folder = scratch.dir("read-only")
    suite, tag = scratch.suite(folder, concurrency=(1,), max_tokens=8)
    with small_disk(folder / "ro", "1m") as disk:
        if disk is None:
            pytest.skip(NO_TMPFS)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        outcome = scratch.cli("run", suite, "--output", disk / "results")
        observe(outcome)
        assert_clean_exit(outcome, (2,), "read-only")
    assert_no_leftovers(tag)


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F29",
            "immutable results folder (chattr +i) holding completed cells",
            "exit 2, one line naming the file (not a temporary name); completed cells untouched",
            "tests/unit/store/test_files.py::test_a_folder_refusing_the_temporary_file_is_named_"
            "by_the_file",
            server=True,
        )
    ],
)
def test_an_immutable_results_folder(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    suite, out = scratch.campaign_copy("immutable")
    shutil.rmtree(out / "eagle3" / "tiny" / "c2")  # a cell left to measure
    kept = summary_bytes(out)
    locked = subprocess.run(["chattr", "+i", str(out)], capture_output=True, check=False)
    if locked.returncode != 0:
        pytest.skip(f"chattr +i is not supported here: {locked.stderr.strip()!r}")
    try:
        outcome = scratch.cli("run", suite, "--output", out)
    finally:
        subprocess.run(["chattr", "-i", str(out)], check=False)
    observe(outcome)
    # The file it could not write, never a temporary name.
    assert_clean_exit(outcome, (2,), f"error: {out / 'manifest.json'}: Operation not permitted")
    assert_kept(kept, summary_bytes(out))


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F30",
            "--output naming a file",
            "exit 2, one line `a file stands where a folder is needed`; the file untouched",
            f"{FAULTS_TEST}::test_output_that_is_a_file_is_one_line_exit_2",
        )
    ],
)
def test_output_naming_a_file(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    folder = scratch.dir("output-file")
    suite, tag = scratch.suite(folder, concurrency=(1,), max_tokens=8)
    target = folder / "a-file"
    target.write_text("not a folder")
    outcome = scratch.cli("run", suite, "--output", target)
    observe(outcome)
    assert_clean_exit(outcome, (2,), "a file stands where a folder is needed")
    assert target.read_text() == "not a folder", f"{DATA_LOSS}the file was changed"
    assert_no_leftovers(tag)


def corrupt_summary_case(id: str, kind: str, reader: str) -> object:
    """A corrupt summary.json read back by `run` (resume: the campaign's copy) or a reader."""
    name = f"{kind} summary.json, then `{reader}`"
    expected = "exit 2, one line naming the file and what to do"
    if reader == "run":
        name, expected = name + " (resume)", expected + "; other cells untouched"
    return case(id, name, expected, CORRUPT_SUMMARY, kind, reader, server=reader == "run")


@pytest.mark.parametrize(
    ("case", "kind", "reader"),
    [
        corrupt_summary_case("F31", "binary", "run"),
        corrupt_summary_case("F32", "binary", "report"),
        corrupt_summary_case("F33", "binary", "gate"),
        corrupt_summary_case("F34", "binary", "lossless"),
        corrupt_summary_case("F35", "wrong-shaped", "run"),
        corrupt_summary_case("F36", "wrong-shaped", "report"),
        corrupt_summary_case("F37", "wrong-shaped", "gate"),
        corrupt_summary_case("F38", "wrong-shaped", "lossless"),
    ],
)
def test_a_corrupt_summary(
    case: FaultCase, kind: str, reader: str, scratch: Scratch, observe: Observed
) -> None:
    if reader == "run":
        suite, out = scratch.campaign_copy(f"corrupt-{kind}-run")
        path = out / "eagle3" / "tiny" / "c1" / "r0" / "summary.json"
        path.write_bytes(CORRUPT[kind])
        kept = {p: b for p, b in summary_bytes(out).items() if p != path}
        outcome = scratch.cli("run", suite, "--output", out)
        observe(outcome)
        assert_clean_exit(outcome, (2,), f"error: {path}: ", one_line=False)
        assert_kept(kept, summary_bytes(out))
        assert path.read_bytes() == CORRUPT[kind], "the corrupt file was overwritten"
        return
    run = scratch.recorded_copy(f"corrupt-{kind}-{reader}")
    path = run / RECORDED_CELL / "summary.json"
    path.write_bytes(CORRUPT[kind])
    args: tuple[str | Path, ...] = (reader, run)
    if reader == "gate":
        args = ("gate", run, "--baseline", scratch.baseline())
    outcome = scratch.cli(*args)
    observe(outcome)
    assert_clean_exit(outcome, (2,), f"error: {path}: ")


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F39",
            "binary manifest.json, then `report`",
            "exit 2, one line naming manifest.json and what to do",
            "tests/unit/cli/test_corrupt_results.py::test_a_corrupt_manifest_is_one_line_with_"
            "what_to_do",
        )
    ],
)
def test_a_binary_manifest(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    run = scratch.recorded_copy("corrupt-manifest")
    (run / "manifest.json").write_bytes(CORRUPT["binary"])
    outcome = scratch.cli("report", run)
    observe(outcome)
    assert_clean_exit(outcome, (2,), "manifest.json")


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F40",
            "cut-off last record in a finished cell, then `lossless`",
            "the cut-off file is named (records < summary), the check cannot pass (exit ≠ 0)",
            "tests/unit/lossless/test_lossless_recorded_run.py::test_a_cut_off_last_record_is_"
            "said_and_the_check_cannot_pass",
        )
    ],
)
def test_a_cut_off_last_record(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    run = scratch.recorded_copy("truncated-record")
    records = run / RECORDED_CELL / "requests.jsonl"
    data = records.read_bytes()
    records.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 40])
    outcome = scratch.cli("lossless", run)
    observe(outcome, "cut-off file named")
    assert_clean_exit(outcome, (1, 2), None, one_line=False, prefix="")
    said = "holds 4 records, but summary.json counts 5 requests"
    assert said in " ".join((outcome.stdout + outcome.stderr).split()), "not said"


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F41",
            "deleted summary.json, then resume",
            "the rerun measures exactly that cell (1 measured, 3 complete), the others "
            "byte-identical",
            "tests/e2e/test_campaign_emulator.py::test_campaign_runs_every_cell_then_a_rerun_"
            "measures_none",
            server=True,
        )
    ],
)
def test_a_deleted_summary(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    suite, out = scratch.campaign_copy("deleted-summary")
    path = out / "baseline" / "tiny" / "c2" / "r0" / "summary.json"
    path.unlink()
    kept = summary_bytes(out)
    outcome = scratch.cli("run", suite, "--output", out)
    said = "1 cells measured, 3 already complete"
    observe(outcome, said)
    assert_clean_exit(outcome, (0,), None, one_line=False, prefix="")
    assert said in outcome.stdout, f"not {said!r}"  # run's tally is a result: stdout
    assert_kept(kept, summary_bytes(out))
    assert path.exists(), "the cell was not measured again"
    assert_consistent(out)


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F42",
            "a cell folder deleted, then `report` and `lossless`",
            "both name the missing cell and how to measure it",
            f"{FAULTS_TEST}::test_report_and_lossless_name_the_cells_a_campaign_did_not_measure",
            server=True,
        )
    ],
)
def test_a_deleted_cell(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    _, out = scratch.campaign_copy("missing-cell")
    shutil.rmtree(out / "eagle3" / "tiny" / "c2")
    report = scratch.cli("report", out, "--format", "md")
    observe(report, "missing cell named by report and lossless")
    assert_clean_exit(report, (0,), None, one_line=False, prefix="")
    for outcome in (report, scratch.cli("lossless", out)):
        text = " ".join((outcome.stdout + outcome.stderr).split())
        assert "eagle3/tiny/c2/r0" in text and "no results" in text, "the cell is not named"


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F43",
            "secrets in a suite's env",
            "never written: manifest, logs, stdout and stderr hold `<redacted>`",
            f"{FAULTS_TEST}::test_secrets_in_a_suite_env_never_reach_the_manifest_or_the_screen",
            server=True,
        )
    ],
)
def test_secrets_in_a_suite(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    folder = scratch.dir("secrets")
    secrets = {"HF_TOKEN": "tok-AAAA1111", "MY_SERVICE_KEY": "key-BBBB2222"}
    table = ", ".join(f'{k} = "{v}"' for k, v in secrets.items())
    suite, tag = scratch.suite(folder, concurrency=(1,), max_tokens=8)
    suite.write_text(
        suite.read_text().replace("seed = 3 }\n", f"seed = 3 }}\nenv = {{ {table} }}\n", 1)
    )
    out = folder / "results"
    outcome = scratch.cli("run", suite, "--output", out)
    observe(outcome, "no secret in manifest, logs or output")
    assert_clean_exit(outcome, (0,), None, one_line=False, prefix="")
    texts = [outcome.stdout, outcome.stderr, (out / "manifest.json").read_text()]
    texts += [p.read_text() for p in (out / "logs").iterdir()]
    leaked = [v for v in secrets.values() for t in texts if v in t]
    assert not leaked, f"leaked: {leaked}"
    assert_no_leftovers(tag)


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F44",
            "a stale lock file left by a dead writer",
            "ignored (no process holds it): the run proceeds, exit 0",
            "tests/unit/store/test_lock.py",
            server=True,
        )
    ],
)
def test_a_stale_lock(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    suite, out = scratch.campaign_copy("stale-lock")
    (out / ".specbench.lock").write_text("pid 999999 on nowhere since 2020 (garbled")
    outcome = scratch.cli("run", suite, "--output", out)
    observe(outcome)
    assert_clean_exit(outcome, (0,), None, one_line=False, prefix="")
    assert "0 cells measured, 4 already complete" in outcome.stdout, "not a plain resume"
