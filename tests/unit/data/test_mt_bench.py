"""MT-Bench from a local FastChat-layout question file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.data import mt_bench
from specbench.data.loader import load_workload

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
QUESTIONS = FIXTURES / "mt_bench" / "question.jsonl"


def test_mt_bench_file_gives_80_two_turn_questions_in_8_categories() -> None:
    workload = load_workload(f"mt-bench:{QUESTIONS}")
    assert workload.name == "mt-bench"
    assert workload.config is None and workload.revision is None
    assert workload.source == str(QUESTIONS.resolve())
    assert len(workload.conversations) == 80
    assert Counter(c.category for c in workload.conversations) == Counter(
        {category: 10 for category in mt_bench.CATEGORIES}
    )
    assert all(len(c.turns) == 2 for c in workload.conversations)
    assert [c.question_id for c in workload.conversations[:2]] == ["81", "82"]
    assert workload.warnings == ()


def test_folder_and_environment_variable_name_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(load_workload(f"mt-bench:{QUESTIONS.parent}").conversations) == 80
    monkeypatch.setenv(mt_bench.PATH_ENV, str(QUESTIONS))
    workload = load_workload("mt-bench", num_prompts=16, seed=1)
    assert Counter(c.category for c in workload.conversations) == Counter(
        {category: 2 for category in mt_bench.CATEGORIES}
    )


def test_missing_path_says_how_to_give_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(mt_bench.PATH_ENV, raising=False)
    with pytest.raises(SpecbenchError, match=r"use mt-bench:PATH or set SPECBENCH_MT_BENCH=PATH"):
        load_workload("mt-bench")
    with pytest.raises(SpecbenchError, match=r"question\.jsonl: MT-Bench question file not found"):
        load_workload(f"mt-bench:{tmp_path}")


def _copy(tmp_path: Path, change) -> Path:
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines()]
    rows = change(rows)
    path = tmp_path / "question.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_wrong_category_or_turn_count_is_refused_and_short_files_warn(tmp_path: Path) -> None:
    def poetry(rows):
        rows[3]["category"] = "poetry"
        return rows

    with pytest.raises(SpecbenchError, match=r"\(question_id 84\): field 'category' is 'poetry'"):
        load_workload(f"mt-bench:{_copy(tmp_path, poetry)}")

    def three_turns(rows):
        rows[0]["turns"].append("and a third")
        return rows

    with pytest.raises(SpecbenchError, match=r"field 'turns' has 3 turns; MT-Bench has 2"):
        load_workload(f"mt-bench:{_copy(tmp_path, three_turns)}")
    short = load_workload(f"mt-bench:{_copy(tmp_path, lambda rows: rows[:40])}")
    assert len(short.conversations) == 40
    assert short.warnings == (
        f"{tmp_path / 'question.jsonl'}: 40 questions, not the 80 of MT-Bench",
    )


def test_reference_answers_are_kept_as_extra(tmp_path: Path) -> None:
    def with_reference(rows):
        rows[0]["reference"] = ["42", "43"]
        return rows

    workload = load_workload(f"mt-bench:{_copy(tmp_path, with_reference)}")
    assert workload.conversations[0].extra == {"reference": '["42", "43"]'}
    assert workload.conversations[1].extra == {}
