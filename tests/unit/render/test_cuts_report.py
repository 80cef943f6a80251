"""The issue-18 report sections on a real vLLM recording that predates them (schema 1).

That run (vLLM 0.32 CPU, n-gram K = 3, `summary` level) has no `acceptance_cuts` and no
per-step arrays, and vLLM merged steps into 6-token chunks: the report recomputes the cuts
from `requests.jsonl`, refuses them and says why, and builds the rest.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from specbench.render.report import ReportOptions, build_report

RUN = Path(__file__).resolve().parents[2] / "fixtures" / "runs" / "tiny-vllm-ngram"


def test_older_results_get_n_a_with_the_reason(tmp_path: Path) -> None:
    results = tmp_path / "run"
    shutil.copytree(RUN, results)
    outcome = build_report(ReportOptions(results_dirs=(results,), formats=("md",)))
    notes = "\n".join(outcome.not_built)
    assert (
        "AL by output position: n/a, ngram/lossless-prompts/c1/r0: 3 of 5 requests cannot be "
        "aligned" in notes
    )
    assert "the server coalesced steps" in notes
    assert "Thinking vs answer AL: n/a" in notes
    # Every baseline turn of that recording came in one chunk, and the server did not time
    # them (recorded before --enable-per-request-metrics): no decode time, and it says so.
    assert (
        "per-domain speedup on lossless-prompts at c=1: n/a, no request with a decode time "
        "(the server's generation time, or E2E > TTFT) in both configs (not timed: ngram 0, "
        "baseline 5)" in notes
    )
    assert "al_by_position" not in {table.name for table in outcome.tables}
    report = (tmp_path / "run" / "report" / "report.md").read_text()
    assert "AL by output position: n/a" in report


def test_the_cli_prints_the_tables_on_stdout_and_what_was_not_built_on_stderr(
    tmp_path: Path,
) -> None:
    from harness import run_cli

    results = tmp_path / "run"
    shutil.copytree(RUN, results)
    result = run_cli("report", results, "--format", "md", timeout=300)
    assert result.returncode == 0, result.stderr
    assert "not built: AL by output position: n/a" in " ".join(result.stderr.split())
    assert "not built:" not in result.stdout
    assert f"report written to {results / 'report'}" in result.stdout
    assert "report written" not in result.stderr


def test_the_per_domain_speedup_counts_every_request_and_who_timed_it(tmp_path: Path) -> None:
    """The same recording, as if the baseline server had timed four of its five turns
    (`--enable-per-request-metrics`): those four count, timed by the server; the fifth is in
    the Not timed column; the n-gram turns are timed by the client (E2E − TTFT)."""
    results = tmp_path / "run"
    shutil.copytree(RUN, results)
    path = results / "baseline" / "lossless-prompts" / "c1" / "r0" / "requests.jsonl"
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    for record in records[1:]:
        record["server_timing"] = {"generation_time_ms": 46.0, "queue_time_ms": 0.1}
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    outcome = build_report(ReportOptions(results_dirs=(results,), formats=("md",)))
    (table,) = [t for t in outcome.tables if t.name.startswith("domain_speedup")]
    rows = {(r.category, r.concurrency): r for r in table.data.itertuples()}
    overall = rows[("overall", 1)]
    assert (overall.speculative_requests, overall.baseline_requests) == (5, 4)
    assert (overall.speculative_server, overall.speculative_client) == (0, 5)
    assert (overall.baseline_server, overall.baseline_client, overall.baseline_not_timed) == (
        4,
        0,
        1,
    )
    # The first record (coding, q-loop) is the one not timed: its domain row shows it.
    coding = table.rows[[row[0] for row in table.rows].index("Coding")]
    assert coding[-1] == "0/1"
    assert (coding_record := table.data[table.data.category == "coding"].iloc[0]) is not None
    assert (coding_record.speculative_requests, coding_record.baseline_requests) == (2, 1)
    # The rate counts all 24 output tokens over the server's 46 ms of generation.
    assert overall.baseline_decode_tok_s == pytest.approx(24 / 0.046)
    assert (
        "c=1: decode times of ngram 0 by the server, 5 by the client, 0 not timed; "
        "baseline 4 by the server, 0 by the client, 1 not timed." in table.footnotes
    )
