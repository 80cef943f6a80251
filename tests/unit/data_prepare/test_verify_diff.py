"""`data verify` and `data diff` on changed, missing and placeholder rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from harness import run_cli
from hf_offline import offline_env

from specbench.data.prepare.diff import diff_config
from specbench.data.prepare.verify import verify

from .conftest import NVIDIA


def _edit(folder: Path, config: str, change) -> None:
    path = folder / "speed" / config / "test.parquet"
    table = pq.read_table(path)
    rows = change(table.to_pylist())
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def _copy(prepared: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(prepared, copy)
    return copy


def test_a_fresh_folder_verifies_and_matches_nvidia(prepared: Path, tmp_path: Path) -> None:
    assert verify(prepared, published=False) == []
    ok = run_cli("data", "verify", prepared, "--recorded-counts", env=offline_env(tmp_path))
    assert ok.returncode == 0 and ok.stdout.strip() == f"{prepared}: verified"
    same = run_cli("data", "diff", prepared, NVIDIA, env=offline_env(tmp_path))
    assert same.returncode == 0, same.stderr
    assert "qualitative: 21/21 rows identical; 0 only in A, 0 only in B" in same.stdout
    assert "throughput_32k: 12/12 rows identical" in same.stdout
    # Against SPEED-Bench's published counts the 21-row fixture is short, and says so.
    published = verify(prepared)
    assert "qualitative: category coding has 3 rows, expected 80" in published
    counts = [p for p in published if " rows, expected " in p]
    assert len(counts) == 11 + 5 * 3  # 11 categories; 3 tiers in each of 5 throughput configs
    short = run_cli("data", "verify", prepared, "--max-problems", "2", env=offline_env(tmp_path))
    assert short.returncode == 1
    assert short.stdout.splitlines() == [
        *published[:2],
        f"and {len(published) - 2} more (--max-problems 0 shows all)",
        f"{len(published)} problem(s) in 6 config(s); {len(counts)} are row counts against "
        "SPEED-Bench's published ones: a folder prepared from a partial mirror or a subset "
        "checks against its own prepared.json with --recorded-counts",
    ]
    every = run_cli("data", "verify", prepared, "--max-problems", "0", env=offline_env(tmp_path))
    assert every.stdout.splitlines()[:-1] == published


def test_changed_missing_and_placeholder_rows(prepared: Path, tmp_path: Path) -> None:
    copy = _copy(prepared, tmp_path)

    def change(rows: list[dict]) -> list[dict]:
        rows[0]["turns"] = [rows[0]["turns"][0].replace("Summarize", "Summarise")]
        rows[1]["turns"] = [
            "FULL BENCHMARK DATA SHOULD BE FETCHED FROM THE SOURCE USING SPECDEC_BENCH"
        ]
        return rows[:-1]

    _edit(copy, "qualitative", change)
    problems = verify(copy, published=False)
    changed, placeholder = (
        (rows := pq.read_table(copy / "speed/qualitative/test.parquet").to_pylist())[0],
        rows[1],
    )
    assert (
        problems[0] == f"qualitative: 1 rows are placeholders (first: {placeholder['question_id']})"
    )
    assert (
        f"qualitative: row {changed['question_id']}: turns differ from the recorded sha256"
        in problems
    )
    assert any(p.startswith("qualitative: row ") and p.endswith(" is missing") for p in problems)
    result = run_cli("data", "verify", copy, "--recorded-counts", env=offline_env(tmp_path))
    assert result.returncode == 1 and result.stdout.splitlines()[0] == problems[0]

    diff = diff_config("qualitative", copy, NVIDIA)
    assert (diff.identical, diff.compared, len(diff.only_b)) == (18, 20, 1)
    first = dict((qid, (column, a, b)) for qid, column, a, b in diff.changed)[
        changed["question_id"]
    ]
    assert first[0] == "turns[0]"
    assert "Summarise" in first[1] and "Summarize" in first[2]
    shown = run_cli(
        "data", "diff", copy, NVIDIA, "--config", "qualitative", env=offline_env(tmp_path)
    )
    assert shown.returncode == 1
    assert "qualitative: 18/20 rows identical; 0 only in A, 1 only in B" in shown.stdout
    assert f"  {changed['question_id']} turns[0]: A 'Summarise" in shown.stdout


def test_diff_reads_nemo_skills_jsonl_against_model_optimizer_parquet(prepared: Path) -> None:
    diff = diff_config("throughput_2k", prepared / "throughput_2k.jsonl", NVIDIA)
    assert (diff.identical, diff.compared, diff.changed) == (12, 12, [])
