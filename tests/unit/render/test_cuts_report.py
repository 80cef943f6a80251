"""The issue-18 report sections on a real vLLM recording that predates them (schema 1).

That run (vLLM 0.32 CPU, n-gram K = 3, `summary` level) has no `acceptance_cuts` and no
per-step arrays, and vLLM merged steps into 6-token chunks: the report recomputes the cuts
from `requests.jsonl`, refuses them and says why, and builds the rest.
"""

from __future__ import annotations

import shutil
from pathlib import Path

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
    # Every baseline turn of that recording came in one chunk: no decode phase to time.
    assert "per-domain speedup on lossless-prompts at c=1: n/a, no request with a decode" in notes
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
