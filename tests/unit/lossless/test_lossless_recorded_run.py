"""The lossless check and the three ALs on a run recorded from real vLLM (tiny model, n-gram).

Every expected number below is worked out by hand from the fixture's files
(tests/fixtures/runs/README.md says how it was recorded).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
from harness import run_cli

from specbench import store
from specbench.lossless import check_lossless, report_section, write_lossless

RUN = Path(__file__).resolve().parents[2] / "fixtures" / "runs" / "tiny-vllm-ngram"
CELL = Path("lossless-prompts") / "c1" / "r0"


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(RUN, target)
    return target


def edit_records(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    for line in lines:
        edit(line)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli("lossless", *args, timeout=120)


def test_three_acceptance_lengths_hand_checked() -> None:
    report = check_lossless(RUN)
    (row,) = report.acceptance
    assert (row.label, row.concurrency, row.num_requests) == ("ngram", 1, 5)
    # /metrics deltas in ngram/.../metrics_{before,after}.prom: drafts 20, accepted 26.
    assert row.num_drafts == 20
    assert row.server_counters_al == pytest.approx(1 + 26 / 20) == 2.3
    # Per-request objects: steps 5+6+3+4+2 = 20, accepted 10+7+5+3+1 = 26: the same steps.
    assert row.num_spec_steps == 20
    assert row.per_request_pooled_al == pytest.approx(2.3)
    assert row.pooled_vs_counters == pytest.approx(0.0, abs=1e-12)
    assert row.per_request_coverage == 1.0
    # Tokens per chunk: every request has 24 tokens and a 1-token prefill chunk, so its
    # estimate is 23 / (chunks − 1); chunk counts are 10, 11, 13, 17 and 7.
    per_request = [23 / 9, 23 / 10, 23 / 12, 23 / 16, 23 / 6]
    assert row.tokens_per_chunk_al == pytest.approx(sum(per_request) / 5)
    assert row.tokens_per_chunk_al == pytest.approx(2.40861, abs=1e-5)
    assert row.official_al == pytest.approx((24 / 10 + 24 / 11 + 48 / 30 + 24 / 7) / 4)
    assert row.official_merged_chunks == 6
    assert row.num_chunk_requests == 5
    assert row.chunk_token_sources == ["usage"]


def test_recorded_ngram_outputs_are_identical_to_the_baseline() -> None:
    report = check_lossless(RUN)
    assert report.baselines == ["baseline"] and report.speculative == ["ngram"]
    (cell,) = report.cells
    assert cell.speculative_cell == "ngram/lossless-prompts/c1/r0"
    assert cell.baseline_cell == "baseline/lossless-prompts/c1/r0"
    assert cell.compared_by == "token_ids"
    assert (cell.overall.num_compared, cell.overall.num_matched) == (5, 5)
    assert cell.first_turns.num_compared == 4 and cell.later_turns.num_compared == 1
    assert cell.per_category["coding"].num_compared == 2
    assert cell.not_compared == {} and cell.divergences == []
    assert cell.passed is True and report.passed is True
    assert report.totals["ngram"].exact_match_rate == 1.0


def test_a_corrupted_output_is_caught_at_its_token_and_its_later_turn_is_not_compared(
    run_copy: Path,
) -> None:
    def corrupt(line: dict) -> None:  # type: ignore[type-arg]
        if line["question_id"] == "q-sum" and line["turn"] == 0:
            line["output_token_ids"][10] += 1

    edit_records(run_copy / "ngram" / CELL / store.REQUESTS, corrupt)
    report = check_lossless(run_copy)
    (cell,) = report.cells
    assert (cell.overall.num_compared, cell.overall.num_matched) == (4, 3)
    assert cell.overall.exact_match_rate == 0.75
    assert cell.not_compared == {"history_diverged": 1}
    (divergence,) = cell.divergences
    assert (divergence.question_id, divergence.turn, divergence.first_divergence) == (
        "q-sum",
        0,
        10,
    )
    assert cell.divergence.buckets == {"0": 0, "1-15": 1, "16-63": 0, "64-255": 0, "256+": 0}
    assert cell.divergence.mean_matched_fraction == pytest.approx(10 / 24)
    assert cell.per_category["math"].exact_match_rate == 0.0
    assert cell.per_category["coding"].exact_match_rate == 1.0
    assert cell.passed is False and report.passed is False

    failed = cli(run_copy)
    assert failed.returncode == 1, failed.stderr
    assert "exact match 0.750 (3/4)" in failed.stdout and "FAIL" in failed.stdout
    assert cli(run_copy, "--min-match-rate", "0.75").returncode == 0
    written = json.loads((run_copy / "lossless.json").read_text())
    assert written["cells"][0]["divergences"][0]["first_divergence"] == 10
    markdown = (run_copy / "lossless.md").read_text()
    assert "| q-sum | 0 | math | 10 | 24 / 24 |" in markdown


def test_without_token_ids_text_is_compared_and_says_so(run_copy: Path) -> None:
    for label in ("baseline", "ngram"):
        edit_records(
            run_copy / label / CELL / store.REQUESTS,
            lambda line: line.update(output_token_ids=None),
        )
    (cell,) = check_lossless(run_copy).cells
    assert cell.compared_by == "text" and cell.overall.num_matched == 5


def test_no_saved_outputs_is_exit_2_with_the_reason(run_copy: Path) -> None:
    for label in ("baseline", "ngram"):
        edit_records(
            run_copy / label / CELL / store.REQUESTS,
            lambda line: line.update(output_token_ids=None, output_text=None),
        )
    (cell,) = check_lossless(run_copy).cells
    assert cell.skipped == "no saved outputs (run at temperature 0, or with --save-outputs)"
    result = cli(run_copy)
    assert result.returncode == 2
    assert "no pair of outputs could be compared" in result.stderr
    assert "Traceback" not in result.stderr


def test_sampled_runs_are_not_compared(run_copy: Path) -> None:
    summary = run_copy / "ngram" / CELL / store.SUMMARY
    data = json.loads(summary.read_text())
    data["temperature"] = 0.7
    summary.write_text(json.dumps(data))
    (cell,) = check_lossless(run_copy).cells
    assert cell.skipped is not None and "temperature 0.7" in cell.skipped
    assert cell.passed is None


def test_a_missing_baseline_cell_is_listed_as_unpaired(run_copy: Path) -> None:
    shutil.rmtree(run_copy / "baseline")
    report = check_lossless(run_copy, baseline="ngram", speculative="ngram")
    assert report.cells == [] and len(report.acceptance) == 1
    assert report.unpaired == ["ngram/lossless-prompts/c1/r0: no baseline label"]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = cli(tmp_path / "nope")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    bad_rate = cli(RUN, "--min-match-rate", "1.5", "--out", tmp_path)
    assert bad_rate.returncode == 2 and "--min-match-rate" in bad_rate.stderr
    unknown = cli(RUN, "--baseline", "nosuch", "--out", tmp_path)
    assert unknown.returncode == 2 and "nosuch" in unknown.stderr


def test_out_folder_and_report_section(tmp_path: Path) -> None:
    _, paths = write_lossless(RUN, out=tmp_path)
    assert [p.name for p in paths] == ["lossless.json", "lossless.md"]
    assert json.loads(paths[0].read_text())["schema_version"] == 1
    section = report_section(RUN)
    assert section is not None
    assert "## Lossless check (temperature 0)" in section
    assert "| ngram | baseline | lossless-prompts c1 r0 | 1.000 (5/5) |" in section
    assert "## Acceptance length: four definitions" in section
    # official: per question, turns pooled: (24/10 + 24/11 + 48/30 + 24/7) / 4 = 2.403,
    # marked ≈ (six 6-token chunks: merged steps)
    assert "| ngram | lossless-prompts c1 r0 | 2.300 | 2.300 | +0.00% | 2.409 | ≈2.403 |" in section


def test_report_md_carries_the_lossless_section(tmp_path: Path) -> None:
    from specbench.render.report import ReportOptions, build_report

    build_report(ReportOptions(results_dirs=(RUN,), out=tmp_path, formats=("md",)))
    text = (tmp_path / "report.md").read_text()
    assert "## Lossless check (temperature 0)" in text
    assert "| ngram | lossless-prompts c1 r0 | 2.300 | 2.300 | +0.00% | 2.409 |" in text


def test_summary_only_directories_have_no_lossless_section(run_copy: Path) -> None:
    for path in run_copy.rglob(store.REQUESTS):
        path.unlink()
    assert report_section(run_copy) is None


def test_a_cut_off_last_record_is_said_and_the_check_cannot_pass(run_copy: Path) -> None:
    records = run_copy / "ngram" / CELL / "requests.jsonl"
    data = records.read_bytes()
    records.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 40])  # last line cut midway
    report = check_lossless(run_copy)
    assert report.incomplete == [
        f"{records}: holds 4 records, but summary.json counts 5 requests (the file is cut short "
        "or was changed): its per-request figures are incomplete; delete the cell's "
        "summary.json and rerun to measure it again"
    ]
    assert not report.passed
    (cell,) = report.cells
    assert cell.passed is None and "disagrees with summary.json" in (cell.skipped or "")
    result = cli(run_copy)
    assert result.returncode == 2, result.stderr  # nothing left to compare
    assert "incomplete: " in result.stderr + result.stdout
    # The baseline's file cut short: the same.
    shutil.copy(RUN / "ngram" / CELL / "requests.jsonl", records)
    base = run_copy / "baseline" / CELL / "requests.jsonl"
    base.write_bytes(b"".join(base.read_bytes().splitlines(keepends=True)[:-1]))
    report = check_lossless(run_copy)
    assert len(report.incomplete) == 1 and str(base) in report.incomplete[0]
    assert not report.passed
