"""LiveCodeBench (livecodebench/code_generation_lite, six JSONL files of the hub repo by URL)."""

from __future__ import annotations

from typing import Any

from specbench.data.prepare.context import Context, first_match, template

REPO = "livecodebench/code_generation_lite"
REVISION = "0fe84c3912ea0c4d4a78037083943e8f0c4dd505"
FILES = tuple(f"{name}.jsonl" for name in ("test", "test2", "test3", "test4", "test5", "test6"))
URLS = [f"https://huggingface.co/datasets/{REPO}/resolve/{REVISION}/{name}" for name in FILES]


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    rows = ctx.cached(REPO, lambda: ctx.upstream.json(URLS, REVISION))
    problem = first_match(rows, "question_id", row["src_id"], f"question_id {row['question_id']}")
    return [
        template(row).format(
            question=problem["question_content"], starter_code=problem["starter_code"]
        )
    ]
