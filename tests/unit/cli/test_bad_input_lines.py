"""Bad command-line input: one line naming the option and what is allowed, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import REPO, run_cli

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
    ],
)
def test_bad_options_get_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    result = run_cli(*args, "--output", tmp_path / "o") if args[0] == "bench" else run_cli(*args)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith(expected), result.stderr
    assert not (tmp_path / "o").exists()  # refused before anything is written
