"""Custom workloads: one JSON object per line, `{"category": str, "turns": [str, ...]}`.

`question_id` is optional (string or integer); without it the 1-based line number is the
id. Any other keys are kept, as strings, in `Conversation.extra`. This is also the layout of
FastChat's MT-Bench `question.jsonl`, which `mt_bench` reuses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data._hf import load_local_dataset
from specbench.data.conversation import Conversation, check_turns

REQUIRED_KEYS = ("category", "turns")


def _check_row(row: Any, where: str) -> None:
    if not isinstance(row, dict):
        raise SpecbenchError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for key in REQUIRED_KEYS:
        if key not in row or row[key] is None:
            raise SpecbenchError(f"{where}: missing field {key!r} (required: category, turns)")
    if not isinstance(row["category"], str) or not row["category"].strip():
        raise SpecbenchError(f"{where}: field 'category' must be a non-empty string")
    check_turns(row["turns"], where)
    qid = row.get("question_id")
    if qid is not None and (isinstance(qid, bool) or not isinstance(qid, str | int) or qid == ""):
        raise SpecbenchError(f"{where}: field 'question_id' must be a non-empty string or integer")


def scan_jsonl(path: Path) -> list[int]:
    """Check every line of a custom JSONL file; return the line number of each row.

    Done before `datasets` reads the file because its errors cannot point at a line.
    """
    if not path.is_file():
        raise SpecbenchError(f"{path}: file not found")
    line_numbers: list[int] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise SpecbenchError(f"{where}: not valid JSON ({error.msg})") from error
            _check_row(row, where)
            line_numbers.append(number)
    if not line_numbers:
        raise SpecbenchError(f"{path}: dataset is empty (no rows)")
    return line_numbers


def rows_to_conversations(
    rows: list[dict[str, Any]], path: Path, line_numbers: list[int] | None = None
) -> list[Conversation]:
    """Turn validated rows into conversations; ids must be unique within the file."""
    conversations: list[Conversation] = []
    seen: dict[str, str] = {}
    for index, row in enumerate(rows):
        where = f"{path}:{line_numbers[index]}" if line_numbers else f"{path} row {index + 1}"
        _check_row(row, where)
        number = line_numbers[index] if line_numbers else index + 1
        qid = row.get("question_id")
        question_id = str(qid) if qid is not None else str(number)
        if question_id in seen:
            raise SpecbenchError(
                f"{where}: duplicate question_id {question_id!r} (first at {seen[question_id]})"
            )
        seen[question_id] = where
        extra = {
            key: value if isinstance(value, str) else json.dumps(value)
            for key, value in row.items()
            if key not in ("question_id", "category", "turns") and value is not None
        }
        conversations.append(
            Conversation(
                question_id=question_id,
                category=row["category"],
                turns=tuple(row["turns"]),
                sub_category=extra.pop("sub_category", None),
                source=extra.pop("source", None),
                extra=extra,
            )
        )
    return conversations


def load_custom(path: Path) -> list[Conversation]:
    """Conversations of a custom JSONL (or Parquet/JSON) file, in file order."""
    line_numbers = scan_jsonl(path) if path.suffix.lower() == ".jsonl" else None
    rows = list(load_local_dataset([path]))
    if not rows:
        raise SpecbenchError(f"{path}: dataset is empty (no rows)")
    if line_numbers is not None and len(line_numbers) != len(rows):
        raise SpecbenchError(
            f"{path}: datasets read {len(rows)} rows but the file has {len(line_numbers)} lines"
        )
    return rows_to_conversations(rows, path, line_numbers)
