"""Messages are printed as text: bracketed words stay, a `[/` in a path never crashes."""

from __future__ import annotations

from pathlib import Path

from harness import run_cli


def message_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_bracketed_text_in_an_error_is_kept(tmp_path: Path) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text('name = "x"\n[target]\nmodel = "m"\n[[workloads]]\ndataset = "mt-bench"\n')
    result = run_cli("run", suite, "--dry-run")
    assert result.returncode == 2
    lines = message_lines(result.stderr)
    assert lines == [f"error: {suite}: no servers: add at least one [servers.<name>] table"]


def test_a_path_with_markup_closing_tag_is_printed_verbatim(tmp_path: Path) -> None:
    odd = tmp_path / "a[/]b[bold]" / "suite.toml"
    result = run_cli("run", odd, "--dry-run")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "MarkupError" not in result.stderr
    lines = message_lines(result.stderr)
    assert len(lines) == 1 and str(odd) in lines[0], result.stderr
