"""Custom JSONL workloads: parsing, ids, and one-line errors naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.data.loader import load_workload

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TINY = FIXTURES / "custom" / "tiny.jsonl"


def test_tiny_fixture_loads_in_file_order_with_ids_and_turns() -> None:
    workload = load_workload(str(TINY))
    assert workload.name == "tiny"
    assert workload.config is None and workload.nominal_context_tokens is None
    assert workload.source == str(TINY.resolve())
    assert len(workload.conversations) == 12
    ids = [conversation.question_id for conversation in workload.conversations]
    assert ids[:4] == ["tiny-00", "2", "tiny-02", "4"]
    assert workload.categories == ("chat", "code", "math")
    multi = [c.question_id for c in workload.conversations if len(c.turns) > 1]
    assert multi == ["tiny-04", "tiny-10"]
    assert workload.conversations[4].turns[1].startswith("Follow-up to question 4")


def test_custom_prefix_and_category_filter(tmp_path: Path) -> None:
    workload = load_workload(f"custom:{TINY}", categories=["math"])
    assert [c.category for c in workload.conversations] == ["math"] * 4


def test_unknown_category_names_the_available_ones() -> None:
    with pytest.raises(
        SpecbenchError, match=r"unknown category 'poetry'; available: chat, code, math"
    ):
        load_workload(str(TINY), categories=["poetry"])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"bad\.jsonl:3: not valid JSON"),
        ('{"turns": ["hi"]}', r"bad\.jsonl:3: missing field 'category'"),
        (
            '{"category": "a", "turns": "hi"}',
            r"bad\.jsonl:3: field 'turns' must be a non-empty list",
        ),
        ('{"category": "a", "turns": []}', r"bad\.jsonl:3: field 'turns' must be a non-empty list"),
        ('["a"]', r"bad\.jsonl:3: expected a JSON object, got list"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    good = '{"category": "a", "turns": ["hello"]}\n'
    path.write_text(good + "\n" + line + "\n" + good)
    with pytest.raises(SpecbenchError, match=message):
        load_workload(str(path))


def test_blank_lines_are_skipped_and_line_numbers_become_ids(tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    path.write_text('{"category": "a", "turns": ["x"]}\n\n{"category": "b", "turns": ["y"]}\n')
    workload = load_workload(str(path))
    assert [c.question_id for c in workload.conversations] == ["1", "3"]


def test_empty_and_missing_files_are_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(SpecbenchError, match=r"empty\.jsonl: dataset is empty"):
        load_workload(str(empty))
    with pytest.raises(SpecbenchError, match=r"nope\.jsonl: file not found"):
        load_workload(str(tmp_path / "nope.jsonl"))


def test_duplicate_question_ids_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    row = '{"question_id": 7, "category": "a", "turns": ["x"]}\n'
    path.write_text(row + row)
    with pytest.raises(SpecbenchError, match=r"dup\.jsonl:2: duplicate question_id '7'"):
        load_workload(str(path))


def test_misspelled_dataset_kind_is_named() -> None:
    with pytest.raises(
        SpecbenchError, match=r"unknown dataset kind 'speed_bench'; use speed-bench"
    ):
        load_workload("speed_bench:qualitative")
    with pytest.raises(SpecbenchError, match=r"--dataset is empty"):
        load_workload("  ")
