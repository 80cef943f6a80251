"""`specbench data inspect`: per-category counts, placeholders reported (not refused), the CLI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from harness import run_cli
from hf_offline import offline_env
from rich.console import Console

from specbench.common.errors import SpecbenchError
from specbench.data.inspect import (
    inspect_dataset,
    quantile,
    report_heading,
    report_notes,
    report_table,
    summarize,
)
from specbench.data.speed_bench import PLACEHOLDER, QUALITATIVE_CATEGORIES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PLACEHOLDERS = FIXTURES / "speed_bench_placeholders"
PLACEHOLDER_PARQUET = PLACEHOLDERS / "data" / "speed" / "qualitative" / "test.parquet"


def test_quantiles_interpolate_like_numpy() -> None:
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([1, 2, 3, 4], 0.9) == pytest.approx(3.7)
    assert quantile([7], 0.9) == 7
    stats = summarize([10, 0, 5])
    assert (stats.minimum, stats.p50, stats.maximum, stats.mean) == (0, 5, 10, 5)


def test_placeholder_data_is_reported_per_category() -> None:
    report = inspect_dataset(f"speed-bench:qualitative:{PLACEHOLDERS}")
    rows = pq.read_table(PLACEHOLDER_PARQUET).to_pylist()
    assert report.config == "qualitative" and report.nominal_context_tokens is None
    assert [s.category for s in report.categories] == list(QUALITATIVE_CATEGORIES)
    assert (report.overall.rows, report.overall.multi_turn, report.overall.placeholders) == (
        44,
        9,
        7,
    )
    for stats in report.categories:
        mine = [r for r in rows if r["category"] == stats.category]
        real = [r for r in mine if not r["turns"][0].startswith(PLACEHOLDER)]
        assert stats.rows == len(mine) == 4
        assert stats.placeholders == len(mine) - len(real)
        lengths = sorted(sum(map(len, r["turns"])) for r in real)
        assert stats.prompt_chars is not None
        assert (stats.prompt_chars.minimum, stats.prompt_chars.maximum) == (lengths[0], lengths[-1])
        assert stats.prompt_tokens is None
    assert report.overall.multi_turn_fraction == pytest.approx(9 / 44)


def test_category_filter_and_unknown_category() -> None:
    report = inspect_dataset(
        f"speed-bench:qualitative:{PLACEHOLDERS}", categories=["math", "coding"]
    )
    assert [s.category for s in report.categories] == ["coding", "math"]
    assert report.overall.rows == 8 and report.overall.placeholders == 1
    with pytest.raises(SpecbenchError, match=r"--category 'chat' is not a qualitative category"):
        inspect_dataset(f"speed-bench:qualitative:{PLACEHOLDERS}", categories=["chat"])
    custom = inspect_dataset(str(FIXTURES / "custom" / "tiny.jsonl"), categories=["code"])
    assert [(s.category, s.rows, s.multi_turn) for s in custom.categories] == [("code", 4, 2)]


def test_table_shows_counts_and_the_preparation_hint() -> None:
    report = inspect_dataset(f"speed-bench:qualitative:{PLACEHOLDERS}")
    console = Console(record=True, width=100)
    console.print(report_table(report))
    text = console.export_text()
    assert "summarization" in text
    assert "│ all " in text and "9 (20%)" in text
    assert "tokens" not in text
    # Notes are whole lines, not a caption wrapped at the (path-dependent) table width.
    assert report_heading(report) == f"speed-bench:qualitative:{PLACEHOLDERS}"
    assert report_notes(report) == [
        f"source: {PLACEHOLDER_PARQUET}",
        "7 placeholder rows must be prepared before a run "
        "(specbench data prepare CONFIG --output DIR, then run --data-dir DIR)",
    ]


def _cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("data", "inspect", *args, timeout=120, env=offline_env(tmp_path))


def test_cli_prints_the_table_and_maps_errors_to_exit_code_2(tmp_path: Path) -> None:
    ok = _cli(
        f"speed-bench:throughput_1k:{FIXTURES / 'speed_bench'}",
        "--category",
        "mixed",
        tmp_path=tmp_path,
    )
    assert ok.returncode == 0, ok.stderr
    assert "mixed" in ok.stdout and "low_entropy" not in ok.stdout
    lines = ok.stdout.splitlines()
    spec = f"speed-bench:throughput_1k:{FIXTURES / 'speed_bench'}"
    parquet = FIXTURES / "speed_bench" / "data" / "speed" / "throughput_1k" / "test.parquet"
    # Heading and notes are whole lines, however long the checkout's path makes them.
    assert lines[0] == spec
    assert lines[-2:] == [f"source: {parquet}", "nominal prompt length 1,000 o200k tokens"]
    bad = _cli("speed-bench:throughput_4k", tmp_path=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "error: unknown SPEED-Bench config 'throughput_4k'; allowed: qualitative, "
        "throughput_1k, throughput_2k, throughput_8k, throughput_16k, throughput_32k"
    ]


def test_cli_prints_warnings_on_stderr_and_the_report_on_stdout(tmp_path: Path) -> None:
    questions = tmp_path / "question.jsonl"
    rows = (FIXTURES / "mt_bench" / "question.jsonl").read_text().splitlines()[:2]
    questions.write_text("\n".join(rows) + "\n")
    result = _cli(f"mt-bench:{questions}", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"warning: {questions.resolve()}: 2 questions, not the 80 of MT-Bench"
    ]
    assert "warning:" not in result.stdout
    assert result.stdout.splitlines()[0] == f"mt-bench:{questions}"
    assert result.stdout.splitlines()[-1] == f"source: {questions.resolve()}"
