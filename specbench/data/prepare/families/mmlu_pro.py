"""MMLU-Pro (TIGER-Lab/MMLU-Pro): consecutive questions from a start row, one per turn."""

from __future__ import annotations

from typing import Any

from specbench.data.prepare import templates
from specbench.data.prepare.context import Context, index_row

REPO = "TIGER-Lab/MMLU-Pro"
REVISION = "30527804ea8854662078e457808040d872ecdf29"


def _question(item: dict[str, Any]) -> str:
    options = "\n".join(
        f"({chr(ord('A') + i)}) {option}" for i, option in enumerate(item["options"])
    )
    return f"Question: {item['question']}\n\nOptions: {options}\n\n"


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    rows = ctx.cached(REPO, lambda: ctx.upstream.hub(REPO, None, REVISION))
    start = int(row["src_id"].split("(")[1].split(",")[0])
    items = [index_row(rows, start + k, row["question_id"]) for k in range(len(row["turns"]))]
    head = templates.MMLU_PRO_HEAD.format(subject=row["sub_category"])
    return [head + _question(items[0]), *(_question(item) for item in items[1:])]
