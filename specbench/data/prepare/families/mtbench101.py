"""MT-Bench-101 (a JSONL file by URL): every user turn of one dialogue, by position."""

from __future__ import annotations

from typing import Any

from specbench.data.prepare.context import Context, index_row


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    rows = ctx.cached(("json", row["source"]), lambda: ctx.upstream.json([row["source"]]))
    dialogue = index_row(rows, int(row["src_id"].rsplit("_", 1)[1]), row["question_id"])
    return [entry["user"] for entry in dialogue["history"]]
