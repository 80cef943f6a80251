"""`specbench report` end to end: files written, offline, bad input as one line and exit 2."""

from __future__ import annotations

import html
import json
import os
import re
import socket
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from analysis_fixtures import (
    QUALITATIVE,
    spec_decode,
    summary,
    write_campaign,
    write_cell,
    write_three_launches,
)
from harness import run_cli
from typer.testing import CliRunner

from specbench.cli.main import app
from specbench.common.errors import SpecbenchError
from specbench.render.outcome import ReportOptions, parse_formats
from specbench.render.report import build_report


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"report opened a network connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_cli_report_writes_everything_offline(tmp_path: Path, no_network: None) -> None:
    results = write_campaign(tmp_path / "campaign")
    out = tmp_path / "out"
    formats = "md,csv,json,png,svg,vllm-bench"
    result = CliRunner().invoke(
        app, ["report", str(results), "--out", str(out), "--format", formats]
    )
    assert result.exit_code == 0, result.output
    assert "1.36× faster" in result.output  # the terminal shows the tables too
    report = (out / "report.md").read_text()
    assert "| Output throughput/GPU | 415.2 tok/s | 281.7 tok/s | 1.47× |" in report
    # official first by default; these summaries have no requests.jsonl, so it is n/a
    assert "| **Overall** | **n/a** | **2.81** |" in report
    assert "| 8K | 500 | n/a | 2.72 |" in report  # nominal size, measured mean input tokens
    # Cells written before the side figures existed: the health table says n/a and why.
    assert "### Cell health" in report and "n/a¹" in report
    assert "written by a specbench from before this figure existed" in report
    figure_links = [line for line in report.splitlines() if line.startswith("![")]
    # throughput vs concurrency, AL by domain, AL vs context, per-position acceptance, and
    # throughput against interactivity on the two workloads both configs ran
    assert len(figure_links) == 6
    for link in figure_links:
        target = out / link[link.rindex("](") + 2 : -1]
        assert target.suffix == ".png" and target.stat().st_size > 10_000
        assert target.with_suffix(".svg").is_file()
    frame = pd.read_parquet(out / "summary.parquet")
    assert len(frame) == 11 and "ttft_ms_median" in frame.columns
    assert len(pd.read_csv(out / "summary.csv")) == 11
    mean = pd.read_csv(out / "summary_mean.csv")
    assert "output_tok_s_per_gpu_ci95" in mean.columns
    # One launch per point (results from before launches): the within-launch interval,
    # labelled so; a point of one repeat without stored errors has no bounds.
    assert set(mean["launches"]) == {1}
    assert set(mean["output_tok_s_per_gpu_ci_kind"]) == {"one-launch"}
    assert {"e2e_ms_median_ci_low", "acceptance_length_within_launch_se"} <= set(mean.columns)
    sweep = pd.read_csv(
        out / "tables" / "concurrency_sweep_eagle3_vs_baseline_speed-bench-qualitative.csv"
    )
    assert list(sweep["concurrency"]) == [1, 2, 48]
    assert (
        (out / "tables" / "al_by_domain_speed-bench-qualitative.md").read_text().startswith("### ")
    )
    tables = json.loads((out / "tables.json").read_text())
    assert {t["name"] for t in tables["tables"]} >= {"al_by_context", "acceptance_summary"}


def test_vllm_bench_export_follows_vllm_names_and_units(tmp_path: Path) -> None:
    results = write_campaign(tmp_path / "campaign")
    build_report(ReportOptions((results,), out=tmp_path / "out", formats=("vllm-bench",)))
    exported = tmp_path / "out" / "vllm-bench"
    assert len(list(exported.glob("*.json"))) == 11
    spec = json.loads((exported / "eagle3__speed-bench-qualitative__c48__r1.json").read_text())
    for key in (
        "output_throughput", "median_ttft_ms", "mean_ttft_ms", "p99_ttft_ms", "median_tpot_ms",
        "median_e2el_ms", "completed", "total_output_tokens", "duration", "request_throughput",
        "max_concurrency", "spec_decode_acceptance_length", "spec_decode_acceptance_rate",
    ):  # fmt: skip
        assert key in spec, key
    assert spec["output_throughput"] == pytest.approx(415.4 * 8)  # whole server, not per GPU
    assert spec["median_e2el_ms"] == 9690.0
    assert spec["max_concurrency"] == 48
    assert spec["spec_decode_acceptance_length"] == pytest.approx(1 + 7300 / 4000)
    assert spec["spec_decode_acceptance_rate"] == pytest.approx(100 * 7300 / 12000)  # percent
    base = json.loads((exported / "baseline__speed-bench-qualitative__c48__r0.json").read_text())
    assert "spec_decode_acceptance_rate" not in base  # as vLLM: absent without speculation


def test_missing_table_is_noted_and_others_built(tmp_path: Path) -> None:
    write_cell(tmp_path / "r", summary(label="baseline", dataset=QUALITATIVE, concurrency=4,
                                       tok_s_per_gpu=100.0))  # fmt: skip
    write_cell(tmp_path / "r", summary(label="eagle3", dataset=QUALITATIVE, concurrency=4,
                                       tok_s_per_gpu=150.0, spec=spec_decode(10, [5])))  # fmt: skip
    outcome = build_report(ReportOptions((tmp_path / "r",), formats=("md",)))
    assert outcome.out_dir == tmp_path / "r" / "report"
    names = [t.name for t in outcome.tables]
    assert any(n.startswith("serving_c4_") for n in names)
    assert "acceptance_summary" in names
    assert any("AL by domain: no per-category acceptance" in n for n in outcome.not_built)
    assert any("no throughput split" in n for n in outcome.not_built)
    report = (outcome.out_dir / "report.md").read_text()
    assert "## Not built" in report
    assert "| Output throughput/GPU | 150.0 tok/s | 100.0 tok/s | 1.50× |" in report


def test_concurrency_not_run_by_both_is_noted(tmp_path: Path) -> None:
    write_cell(tmp_path, summary(label="baseline", dataset=QUALITATIVE, concurrency=4))
    write_cell(tmp_path, summary(label="eagle3", dataset=QUALITATIVE, concurrency=8,
                                 spec=spec_decode(10, [5])))  # fmt: skip
    outcome = build_report(ReportOptions((tmp_path,), formats=("md",), concurrency=8))
    assert any("not run by both" in n for n in outcome.not_built)


def test_bad_formats_and_several_dirs_without_out(tmp_path: Path) -> None:
    assert parse_formats("md, PNG,md") == ("md", "png")
    with pytest.raises(SpecbenchError, match="unknown pdf; allowed: md, csv"):
        parse_formats("md,pdf")
    write_cell(tmp_path / "a", summary(label="x", dataset=QUALITATIVE, concurrency=1))
    write_cell(tmp_path / "b", summary(label="y", dataset=QUALITATIVE, concurrency=1))
    with pytest.raises(SpecbenchError, match="--out is required"):
        build_report(ReportOptions((tmp_path / "a", tmp_path / "b"), formats=("md",)))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return run_cli("report", *args, timeout=120, env=env)


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _cli(str(empty))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "no summary.json found" in result.stderr
    assert "Traceback" not in result.stderr
    for given, said in (("nowhere", "does not exist"), ("file", "is a file, not a directory")):
        (tmp_path / "file").write_text("x")
        result = _cli(str(tmp_path / given))
        assert (result.returncode, result.stderr) == (
            2,
            f"error: results directory {tmp_path / given} {said}\n",
        )

    results = write_campaign(tmp_path / "campaign")
    result = _cli(str(results), "--concurrency", "64", "--format", "md")
    assert result.returncode == 2
    assert "--concurrency 64 was not run" in result.stderr
    assert result.stderr.strip().count("\n") == 0

    result = _cli(str(results), "--baseline", "vanilla", "--format", "md")
    assert result.returncode == 2
    assert "--baseline 'vanilla' is not a label" in result.stderr


def test_baseline_only_results_build_what_they_can(tmp_path: Path) -> None:
    write_cell(tmp_path, summary(label="baseline", dataset=QUALITATIVE, concurrency=4))
    outcome = build_report(ReportOptions((tmp_path,), formats=("md",)))
    assert [t.name for t in outcome.tables] == ["card_header", "cell_health"]
    assert "headline: no AL by domain and no serving table to lead with" in outcome.not_built
    assert "serving and concurrency tables: no speculative config" in outcome.not_built
    assert (outcome.out_dir / "summary.csv").is_file()


def _serving_names(root: Path, folder: str) -> list[str]:
    for dataset in (f"{folder}tiny.jsonl", f"{folder}other.jsonl"):
        for label, spec in (("baseline", None), ("eagle3", spec_decode(10, [5]))):
            write_cell(root, summary(label=label, dataset=dataset, concurrency=4, spec=spec))
    outcome = build_report(ReportOptions((root,), formats=("md", "csv", "png")))
    written = [p for p in outcome.out_dir.rglob("*") if p.is_file()]
    assert max(len(p.name.encode()) for p in written) <= 160
    return sorted(p.name for p in written if p.name.startswith(("serving_c4_", "throughput_")))


def test_file_names_come_from_workload_names_never_a_local_path(tmp_path: Path) -> None:
    deep = "/" + "a-rather-long-folder-name/" * 12  # 313 characters
    here = _serving_names(tmp_path / "r", deep)
    # The same datasets in another folder (another machine): the same file names.
    assert _serving_names(tmp_path / "elsewhere", "/data/") == here
    assert "serving_c4_eagle3_vs_baseline_other.md" in here
    assert "serving_c4_eagle3_vs_baseline_tiny.csv" in here
    assert not [name for name in here if "folder" in name or "data" in name]


def test_a_report_that_cannot_be_written_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from specbench.store import files

    results = write_campaign(tmp_path / "campaign")
    out = tmp_path / "out"
    build_report(ReportOptions((results,), out=out, formats=("md", "csv", "json")))
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert Path("report.md") in before and Path("summary.csv") in before

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left") as raised:
        build_report(ReportOptions((results,), out=out, formats=("md", "csv", "json")))
    assert raised.value.filename is not None  # the error names the file it could not write
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    # Every file is the complete one from before, and no temporary file is left behind.
    assert after == before


def test_nested_summary_records_reach_the_parquet_file_as_json_text(tmp_path: Path) -> None:
    from specbench.store.summary import CellErrors, CellSummary

    results = write_campaign(tmp_path / "campaign")
    # A cell of fewer than 5 conversations: its error record has empty figure tables, which
    # Parquet cannot store as a struct (`report` crashed on such a cell).
    path = next(results.rglob("summary.json"))
    cell = CellSummary.model_validate_json(path.read_text())
    errors = CellErrors(
        num_conversations=4, resamples=400, seed=0, note="no noise estimate: 4 conversations (< 5)"
    )
    path.write_text(cell.model_copy(update={"standard_errors": errors}).model_dump_json())
    out = tmp_path / "out"
    build_report(ReportOptions((results,), out=out, formats=("md",)))
    frame = pd.read_parquet(out / "summary.parquet")
    stored = [json.loads(v) for v in frame["standard_errors"] if isinstance(v, str)]
    assert stored == [errors.model_dump(mode="json")]


def _hover(page: str) -> str:
    """Every hover line of report.html's figures (their `data-points`, JSON)."""
    return "\n".join(
        line
        for found in re.findall(r"data-points='([^']*)'", page)
        for line in json.loads(html.unescape(found))
    )


def test_three_launches_give_error_bars_and_intervals_on_hover(tmp_path: Path) -> None:
    results = write_three_launches(tmp_path / "three", concurrencies=(4, 8))
    out = tmp_path / "out"
    build_report(ReportOptions((results,), out=out, formats=("md", "svg", "html")))
    page = (out / "report.html").read_text()
    # The throughput figure's error bars (one group per config) and, on hover, each point's
    # interval: eagle3 153 ± 7.45, baseline 101 ± 2.48, the speedup's 1.51 ± 0.06.
    assert 'id="error-bars-speculative' in page and 'id="error-bars-baseline' in page
    hover = _hover(page)
    assert "eagle3 95% interval: 145.5–160.5 (Student t over launch values)" in hover
    assert "baseline 95% interval: 98.5–103.5" in hover
    assert "speedup 95% interval: (1.45–1.58)" in hover
    report = (out / "report.md").read_text()
    row = "| Output throughput/GPU | 153.0 ± 7.5 tok/s | 101.0 ± 2.5 tok/s | 1.51× (1.45–1.58) |"
    assert row in report
    mean = pd.read_csv(out / "summary_mean.csv")
    assert list(mean["launches"]) == [3, 3, 3, 3]
    assert set(mean["output_tok_s_per_gpu_ci_kind"]) == {"launches"}


def test_one_launch_draws_no_error_bars(tmp_path: Path) -> None:
    results = write_three_launches(tmp_path / "one", launches=1, concurrencies=(4, 8))
    out = tmp_path / "out"
    build_report(ReportOptions((results,), out=out, formats=("svg", "html")))
    page = (out / "report.html").read_text()
    assert "error-bars-" not in page
    assert "(one launch: between-launch variance not measured)" in _hover(page)
