"""MT-Bench: FastChat's `question.jsonl` (80 questions, 8 categories, 2 turns each).

specbench ships no MT-Bench text. Point it at a local copy of FastChat's
`fastchat/llm_judge/data/mt_bench/question.jsonl` with `--dataset mt-bench:PATH` or the
`SPECBENCH_MT_BENCH` environment variable (a file, or a folder holding `question.jsonl`).
"""

from __future__ import annotations

import os
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.data.categories import MT_BENCH_CATEGORIES
from specbench.data.conversation import Conversation
from specbench.data.custom import load_custom

PATH_ENV = "SPECBENCH_MT_BENCH"
CATEGORIES = MT_BENCH_CATEGORIES
EXPECTED_QUESTIONS = 80
EXPECTED_TURNS = 2


def resolve_path(path: str | None) -> Path:
    """The question file named by `path`, else by `$SPECBENCH_MT_BENCH`."""
    given = path or os.environ.get(PATH_ENV, "").strip()
    if not given:
        raise SpecbenchError(
            f"mt-bench needs a local copy of FastChat's question.jsonl: use mt-bench:PATH "
            f"or set {PATH_ENV}=PATH"
        )
    resolved = Path(given).expanduser()
    if resolved.is_dir():
        resolved = resolved / "question.jsonl"
    if not resolved.is_file():
        raise SpecbenchError(f"{resolved}: MT-Bench question file not found")
    return resolved


def load_mt_bench(path: str | None = None) -> tuple[Path, list[Conversation], list[str]]:
    """The file, its conversations in file order, and warnings (e.g. not 80 questions)."""
    resolved = resolve_path(path)
    conversations = load_custom(resolved)
    for conversation in conversations:
        where = f"{resolved} (question_id {conversation.question_id})"
        if conversation.category not in CATEGORIES:
            raise SpecbenchError(
                f"{where}: field 'category' is {conversation.category!r}, not an MT-Bench "
                f"category; allowed: {', '.join(CATEGORIES)}"
            )
        if len(conversation.turns) != EXPECTED_TURNS:
            raise SpecbenchError(
                f"{where}: field 'turns' has {len(conversation.turns)} turns; MT-Bench has 2"
            )
    warnings = []
    if len(conversations) != EXPECTED_QUESTIONS:
        warnings.append(
            f"{resolved}: {len(conversations)} questions, not the {EXPECTED_QUESTIONS} of MT-Bench"
        )
    return resolved, conversations, warnings
