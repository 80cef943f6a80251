"""Bad command-line input: one line naming the option and what is allowed, exit 2.

Each case is refused while the options are parsed and checked, before any command body
runs, so it runs in process through the executable's own `main` (harness.invoke_main): a
subprocess would add only an interpreter start per case. tests/unit/cli/test_console.py and
the e2e tests run the executable itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import REPO, invoke_main

DATA = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"
BENCH = ("bench", "--endpoint", "http://127.0.0.1:9", "--dataset", str(DATA))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("run",), "error: Missing argument 'suite'. (see `"),
        (("nosuch",), "error: No such command 'nosuch'."),
        (("run", "s.toml", "--max-restarts", "-1"), "error: Invalid value for '--max-restarts'"),
        (("run", "s.toml", "--ready-timeout", "0"), "error: Invalid value for '--ready-timeout'"),
        ((*BENCH, "--concurrency", "99999999999999999999"), "error: --concurrency: concurrency "),
        ((*BENCH, "--concurrency", "1,x"), "error: --concurrency: expected comma-separated"),
        ((*BENCH, "--temperature", "nan"), "error: Invalid value for '--temperature'"),
        ((*BENCH, "--temperature", "inf"), "error: --temperature: Input should be a finite"),
        ((*BENCH, "--request-timeout", "0"), "error: Invalid value for '--request-timeout'"),
        ((*BENCH, "--request-timeout", "-5"), "error: Invalid value for '--request-timeout'"),
        (
            (*BENCH, "--request-timeout", "inf"),
            "error: --request-timeout: Input should be a finite",
        ),
        ((*BENCH, "--max-tokens", "0"), "error: Invalid value for '--max-tokens'"),
        (("run", "s.toml", "--pilot-size", "0"), "error: Invalid value for '--pilot-size'"),
        (
            ("run", "s.toml", "--pilot-concurrency", "0"),
            "error: Invalid value for '--pilot-concurrency'",
        ),
    ],
)
def test_bad_options_get_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    result = (
        invoke_main(*args, "--output", tmp_path / "o") if args[0] == "bench" else invoke_main(*args)
    )
    assert result.code == 2, result.stderr
    assert len(result.lines) == 1 and result.lines[0].startswith(expected), result.stderr
    assert not (tmp_path / "o").exists()  # refused before anything is written


SUITE = REPO / "suites" / "emulator.toml"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--pilot",), "error: --pilot: only with --dry-run (and --executor local)"),
        (
            ("--dry-run", "--pilot", "--executor", "slurm"),
            "error: --pilot: only with --dry-run (and --executor local)",
        ),
        (
            ("--dry-run", "--pilot-size", "2"),
            "error: --pilot-size, --pilot-concurrency, --pilot-output: only with --pilot",
        ),
        (("--dry-run", "--pilot", "--pilot-output", "{o}/.pilot"), "error: --pilot-output "),
        (("--dry-run", "--pilot", "--pilot-output", "{o}"), "error: --pilot-output "),
    ],
)
def test_bad_pilot_options_get_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    output = tmp_path / "o"
    filled = [arg.replace("{o}", str(output)) for arg in args]
    result = invoke_main("run", SUITE, "--output", output, *filled)
    assert result.code == 2, result.stderr
    assert len(result.lines) == 1 and result.lines[0].startswith(expected), result.stderr
    assert not output.exists()  # refused before any server starts or anything is written
