"""Bad input to the readers and the rest (I91–I119): `report`, `gate`, `lossless` and
`baseline save` on missing, empty or wrong folders and files, their options out of range,
`emulate` and `data inspect` with bad values, a bad console width, a `report
--variance-from` campaign that cannot calibrate (I115–I119).

Each is refused before anything runs: exit 2, one line naming the option, file or field,
no traceback, nothing written. I98 merges a finished emulator campaign (`fault_server`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from analysis_fixtures import write_three_launches
from fault_checks import assert_refused
from fault_scratch import (
    RECORDED_CELL,
    RECORDED_RUN,
    FaultCase,
    Observed,
    Scratch,
    bad_input,
)
from harness import free_port

pytestmark = pytest.mark.faults

LOSSLESS_BAD = (
    "tests/unit/lossless/test_lossless_recorded_run.py::test_bad_input_is_one_line_and_exit_2"
)
GATE_RULES = "tests/unit/gate/test_gate_rules.py"
VARIANCE_FROM = "tests/unit/analysis/test_intervals.py"
BINARY = bytes(range(256)) * 4

Build = Callable[[Scratch, Path], list[Any]]


def mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def write_file(path: Path, data: str | bytes) -> Path:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


def only_manifest(path: Path) -> Path:
    path.mkdir()
    shutil.copy(RECORDED_RUN / "manifest.json", path / "manifest.json")
    return path


def variance_from(earlier: Callable[[Path], object]) -> Build:
    """`report` of a one-launch campaign `--variance-from` the folder `earlier` writes."""

    def build(s: Scratch, f: Path) -> list[Any]:
        current = write_three_launches(f / "current", launches=1)
        earlier(f / "earlier")
        return ["report", current, "--variance-from", f / "earlier", "--out", f / "o"]

    return build


def gate_rules(text: str) -> Build:
    """`gate` of the recorded run against its baseline, with rules.toml holding `text`."""
    return lambda s, f: [
        "gate",
        RECORDED_RUN,
        "--baseline",
        s.baseline(),
        "--rules",
        write_file(f / "rules.toml", text),
    ]


@pytest.mark.parametrize(
    ("case", "contains", "build", "env"),
    [
        bad_input(
            "I91",
            "report on a missing folder",
            "",
            "nosuch",
            lambda s, f: ["report", f / "nosuch"],
            None,
        ),
        bad_input(
            "I92",
            "report on a folder with no results",
            "",
            "empty",
            lambda s, f: ["report", mkdir(f / "empty")],
            None,
        ),
        bad_input(
            "I93",
            "report on a file",
            "",
            "a-file",
            lambda s, f: ["report", write_file(f / "a-file", "x")],
            None,
        ),
        bad_input(
            "I94",
            "report on a folder with a manifest.json and no cells",
            "",
            "only-manifest",
            lambda s, f: ["report", only_manifest(f / "only-manifest"), "--out", f / "r"],
            None,
        ),
        bad_input(
            "I95",
            "report --format unknown",
            "",
            "--format",
            lambda s, f: ["report", RECORDED_RUN, "--format", "docx", "--out", f / "r"],
            None,
        ),
        bad_input(
            "I96",
            "report --al-definition unknown",
            "",
            "--al-definition",
            lambda s, f: ["report", RECORDED_RUN, "--al-definition", "mean", "--out", f / "r"],
            None,
        ),
        bad_input(
            "I97",
            "report --baseline unknown label",
            "",
            "nosuch",
            lambda s, f: ["report", RECORDED_RUN, "--baseline", "nosuch", "--out", f / "r"],
            None,
        ),
        bad_input(
            "I98",
            "report: two results folders without --out",
            "",
            "--out",
            lambda s, f: ["report", RECORDED_RUN, s.complete_campaign() / "results"],
            None,
            server=True,
        ),
        bad_input(
            "I99",
            "gate on a missing folder",
            "",
            "nosuch",
            lambda s, f: ["gate", f / "nosuch", "--baseline", s.baseline()],
            None,
        ),
        bad_input(
            "I100",
            "gate on a folder with no results",
            "",
            "empty",
            lambda s, f: ["gate", mkdir(f / "empty"), "--baseline", s.baseline()],
            None,
        ),
        bad_input(
            "I101",
            "gate --baseline missing",
            "",
            "nosuch.json",
            lambda s, f: ["gate", RECORDED_RUN, "--baseline", f / "nosuch.json"],
            None,
        ),
        bad_input(
            "I102",
            "gate --baseline not a baseline (a summary.json)",
            "",
            "summary.json",
            lambda s, f: [
                "gate",
                RECORDED_RUN,
                "--baseline",
                RECORDED_RUN / RECORDED_CELL / "summary.json",
            ],
            None,
        ),
        bad_input(
            "I103",
            "gate --baseline binary",
            "",
            "b.json",
            lambda s, f: ["gate", RECORDED_RUN, "--baseline", write_file(f / "b.json", BINARY)],
            None,
        ),
        bad_input(
            "I104",
            "gate --rules malformed TOML",
            GATE_RULES,
            "rules.toml",
            gate_rules("[metrics\n"),
            None,
        ),
        bad_input(
            "I105",
            "gate --rules unknown metric",
            GATE_RULES,
            "nosuch_metric",
            gate_rules("[metrics.nosuch_metric]\nmax = 1\n"),
            None,
        ),
        bad_input(
            "I106",
            "lossless on a missing folder",
            LOSSLESS_BAD,
            "does not exist",
            lambda s, f: ["lossless", f / "nosuch"],
            None,
        ),
        bad_input(
            "I107",
            "lossless on a folder with no results",
            "",
            "empty",
            lambda s, f: ["lossless", mkdir(f / "empty")],
            None,
        ),
        bad_input(
            "I108",
            "lossless --min-match-rate 1.5",
            LOSSLESS_BAD,
            "--min-match-rate",
            lambda s, f: ["lossless", RECORDED_RUN, "--min-match-rate", "1.5", "--out", f],
            None,
        ),
        bad_input(
            "I109",
            "lossless --baseline unknown label",
            LOSSLESS_BAD,
            "nosuch",
            lambda s, f: ["lossless", RECORDED_RUN, "--baseline", "nosuch", "--out", f],
            None,
        ),
        bad_input(
            "I110",
            "baseline save on a missing folder",
            "",
            "nosuch",
            lambda s, f: ["baseline", "save", f / "nosuch", "--out", f / "b.json"],
            None,
        ),
        bad_input(
            "I111",
            "emulate --acceptance 1.5",
            "tests/unit/emulator/test_emulator_config.py",
            "--acceptance",
            lambda s, f: ["emulate", "--port", str(free_port()), "--acceptance", "1.5,0.5,0.5"],
            None,
        ),
        bad_input(
            "I112",
            "emulate --port 99999",
            "",
            "--port",
            lambda s, f: ["emulate", "--port", "99999"],
            None,
        ),
        bad_input(
            "I113",
            "data inspect on a missing file",
            "",
            "nosuch.jsonl",
            lambda s, f: ["data", "inspect", str(f / "nosuch.jsonl")],
            None,
        ),
        bad_input(
            "I114",
            "SPECBENCH_CONSOLE_WIDTH=abc",
            "tests/unit/cli/test_console.py::test_the_cli_refuses_a_bad_width_in_one_line_with_"
            "exit_2",
            "SPECBENCH_CONSOLE_WIDTH",
            lambda s, f: ["report", RECORDED_RUN, "--out", f / "r"],
            {"SPECBENCH_CONSOLE_WIDTH": "abc"},
        ),
        bad_input(
            "I115",
            "report --variance-from a missing folder",
            VARIANCE_FROM,
            "--variance-from",
            variance_from(lambda path: None),
            None,
        ),
        bad_input(
            "I116",
            "report --variance-from a folder that is no results directory",
            VARIANCE_FROM,
            "--variance-from",
            variance_from(mkdir),
            None,
        ),
        bad_input(
            "I117",
            "report --variance-from a campaign of another suite",
            VARIANCE_FROM,
            "--variance-from",
            variance_from(lambda path: write_three_launches(path, suite="other-suite")),
            None,
        ),
        bad_input(
            "I118",
            "report --variance-from a campaign of another target model",
            VARIANCE_FROM,
            "--variance-from",
            variance_from(lambda path: write_three_launches(path, model="other-model")),
            None,
        ),
        bad_input(
            "I119",
            "report --variance-from a campaign of 2 launches",
            VARIANCE_FROM,
            "--variance-from",
            variance_from(lambda path: write_three_launches(path, launches=2)),
            None,
        ),
    ],
)
def test_a_reader_refuses_bad_input(
    case: FaultCase,
    contains: str,
    build: Build,
    env: dict[str, str] | None,
    scratch: Scratch,
    observe: Observed,
) -> None:
    folder = scratch.dir("input")
    outcome = scratch.cli(*build(scratch, folder), env=env)
    observe(outcome)
    assert_refused(outcome, contains, folder / "o")
