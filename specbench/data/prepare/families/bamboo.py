"""BAMBOO (RUCAIBox/BAMBOO, a JSONL file by URL): dialogues joined into one completion prompt."""

from __future__ import annotations

import re
from typing import Any

from specbench.data.prepare import templates, tokens
from specbench.data.prepare.context import Context, index_row


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    where = f"question_id {row['question_id']}"
    target = ctx.num_tokens(where)
    rows = ctx.cached(("json", row["source"]), lambda: ctx.upstream.json([row["source"]]))
    picks = [int(number) for number in re.findall(r"_(\d+)", row["src_id"])]
    contents = [index_row(rows, pick, where)["content"] for pick in picks]
    body = "\n\n".join(
        f"START CONTENT {number}\n\n{content}\n\nEND CONTENT"
        for number, content in enumerate(contents, start=1)
    )
    return [
        tokens.fit(
            templates.pick("BAMBOO_HEAD", ctx.flavour) + body + templates.BAMBOO_TAIL, target
        )
    ]
