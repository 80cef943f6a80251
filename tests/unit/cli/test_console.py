"""The CLI's one console width rule (specbench/cli/console.py) and its bad-input error."""

from __future__ import annotations

import io
import os

import pytest
from harness import run_cli

from specbench.cli.console import UNATTENDED_WIDTH, WIDTH_ENV, env_width, make_console
from specbench.common.errors import SpecbenchError


def test_the_variable_fixes_the_width_over_columns_and_the_terminal_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(WIDTH_ENV, "77")
    monkeypatch.setenv("COLUMNS", "50")
    assert make_console(file=io.StringIO()).width == 77
    assert make_console(stderr=True).width == 77


def test_without_it_output_that_is_no_terminal_gets_wide_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(WIDTH_ENV, raising=False)
    monkeypatch.setenv("COLUMNS", "50")
    assert make_console(file=io.StringIO()).width == UNATTENDED_WIDTH == 200
    monkeypatch.setenv("COLUMNS", "300")  # rich's own rule, when it gives more
    assert make_console(file=io.StringIO()).width == 300


def test_a_long_line_wraps_only_past_the_fixed_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WIDTH_ENV, "60")
    out = io.StringIO()
    make_console(file=out).print("word " * 20)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines == [" ".join(["word"] * 12), " ".join(["word"] * 8)]  # 12 × 5 = 60 columns


@pytest.mark.parametrize("value", ["abc", "39", "-80", "1e3"])
def test_bad_values_are_named_with_what_is_allowed(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(WIDTH_ENV, value)
    with pytest.raises(SpecbenchError) as error:
        env_width()
    assert str(error.value) == (f"{WIDTH_ENV}={value!r}: allowed: a whole number of columns >= 40")
    assert make_console(file=io.StringIO()).width == UNATTENDED_WIDTH  # ignored when building


def test_the_cli_refuses_a_bad_width_in_one_line_with_exit_2() -> None:
    result = run_cli("report", "/nonexistent", env={**os.environ, WIDTH_ENV: "wide"})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {WIDTH_ENV}='wide': allowed: a whole number of columns >= 40"
    ]
