"""tools/faults_table.py writes docs/faults.md's table from the JUnit XML of the fault cases:
from a real pytest run of two cases, and from a report holding a failed, a data-loss and a
skipped case. (Not fault cases: no `faults` marker.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness import REPO

TOOL = REPO / "tools" / "faults_table.py"
CASES = (
    "tests/e2e/faults/test_fault_storage.py::test_a_binary_manifest[F39]",
    "tests/e2e/faults/test_bad_input_readers.py::test_a_reader_refuses_bad_input[I95]",
)


def table(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, TOOL, *map(str, args)], capture_output=True, text=True, check=False
    )


def test_the_table_of_a_real_run_of_two_cases(tmp_path: Path) -> None:
    xml = tmp_path / "faults.xml"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *CASES, f"--junitxml={xml}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    done = table(xml)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith(("| F", "| I"))]
    assert [row.split(" | ")[0] for row in rows] == ["| F39", "| I95"]  # faults first
    assert rows[0].startswith(
        "| F39 | binary manifest.json, then `report` | exit 2, one line naming manifest.json "
        "and what to do | exit 2; error: "
    )
    assert "manifest.json" in rows[0].split(" | ")[3]
    assert rows[0].endswith(
        " | pass | tests/unit/cli/test_corrupt_results.py::test_a_corrupt_manifest_is_one_line_"
        "with_what_to_do |"
    )
    assert rows[1].startswith(
        "| I95 | report --format unknown | exit 2, one line naming '--format' | exit 2; error: "
        "--format 'docx': "
    )
    assert rows[1].endswith(" | pass | — |")
    assert done.stdout.endswith(
        "Faults survived: 1/1\nBad inputs with a clean error: 1/1\nData-loss cases: 0\n"
    )


def junit_case(name: str, case_id: str, kind: str, outcome: str = "") -> str:
    properties = "".join(
        f'<property name="{key}" value="{value}" />'
        for key, value in {
            "case_id": case_id,
            "kind": kind,
            "name": name,
            "expected": "exit 2",
            "tests": "",
            "observed": "exit 1; error: x",
        }.items()
    )
    return (
        f'<testcase classname="tests.e2e.faults.t" name="test_x[{case_id}]" time="1.5">'
        f"<properties>{properties}</properties>{outcome}</testcase>"
    )


REPORT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite>'
    + junit_case("kept", "F02", "fault")
    + junit_case(
        "lost",
        "F10",
        "fault",
        '<failure message="AssertionError: DATA LOSS: completed cells changed or lost: '
        "['a/summary.json']&#10;assert not ['a/summary.json']\">traceback</failure>",
    )
    + junit_case(
        "no disk",
        "F03",
        "fault",
        '<skipped type="pytest.skip" message="cannot mount a tmpfs here (needs root)">x</skipped>',
    )
    + junit_case(
        "loud",
        "I100",
        "input",
        '<failure message="AssertionError: 3 lines on stderr, not 1&#10;assert 3 == 1">x</failure>',
    )
    + junit_case("quiet", "I9", "input")
    + '<testcase classname="tests.e2e.faults.test_fault_checks" name="test_other" time="0.1" />'
    + "</testsuite></testsuites>"
)


def test_failed_data_loss_and_skipped_cases_are_counted_and_said(tmp_path: Path) -> None:
    xml = tmp_path / "faults.xml"
    xml.write_text(REPORT)
    done = table(xml)
    assert done.returncode == 1  # a case failed
    rows = done.stdout.splitlines()
    assert rows[2:7] == [
        "| F02 | kept | exit 2 | exit 1; error: x | pass | — |",
        "| F03 | no disk | exit 2 | cannot mount a tmpfs here (needs root) | skip | — |",
        "| F10 | lost | exit 2 | exit 1; error: x — DATA LOSS: completed cells changed or "
        "lost: ['a/summary.json'] | fail (DATA LOSS) | — |",
        "| I9 | quiet | exit 2 | exit 1; error: x | pass | — |",
        "| I100 | loud | exit 2 | exit 1; error: x — 3 lines on stderr, not 1 | fail | — |",
    ]
    assert rows[7:] == [
        "",
        "Faults survived: 1/2 (1 skipped)",
        "Bad inputs with a clean error: 1/2",
        "Data-loss cases: 1",
    ]


def test_the_table_goes_between_the_documents_markers(tmp_path: Path) -> None:
    xml = tmp_path / "faults.xml"
    xml.write_text(REPORT)
    begin = "<!-- faults table: tools/faults_table.py writes what follows -->"
    end = "<!-- end of the faults table -->"
    doc = tmp_path / "faults.md"
    doc.write_text(f"# Faults\n\nBefore.\n\n{begin}\nold table\n{end}\n\nAfter.\n")
    assert table(xml, "--doc", doc).returncode == 1
    text = doc.read_text()
    assert text.startswith(f"# Faults\n\nBefore.\n\n{begin}\n| # | case |")
    assert text.endswith(f"Data-loss cases: 1\n{end}\n\nAfter.\n")
    assert "old table" not in text


def test_a_file_it_cannot_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = table(tmp_path / "nosuch.xml")
    assert missing.returncode == 2
    assert missing.stderr.startswith(f"error: {tmp_path / 'nosuch.xml'}: ")
    assert len(missing.stderr.splitlines()) == 1
    (tmp_path / "other.xml").write_text(
        '<testsuites><testsuite><testcase name="t" /></testsuite></testsuites>'
    )
    none = table(tmp_path / "other.xml")
    assert (none.returncode, none.stderr.strip()) == (
        2,
        f"error: {tmp_path / 'other.xml'}: no fault case (from `pytest -m faults`)",
    )
    xml = tmp_path / "faults.xml"
    xml.write_text(REPORT)
    (tmp_path / "plain.md").write_text("no markers\n")
    no_markers = table(xml, "--doc", tmp_path / "plain.md")
    assert no_markers.returncode == 2
    assert no_markers.stderr.startswith(f"error: {tmp_path / 'plain.md'}: the markers ")
