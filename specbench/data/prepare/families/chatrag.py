"""ChatRAG-Bench (nvidia/ChatRAG-Bench, configs hybridial then sqa): context and user turns."""

from __future__ import annotations

from typing import Any

from specbench.data.prepare import templates
from specbench.data.prepare.context import Context, index_row

REPO = "nvidia/ChatRAG-Bench"
REVISION = "af6c7d420ddddf21f54f8ab3394bbf462aad2577"
CONFIGS = ("hybridial", "sqa")


def _both(ctx: Context) -> Any:
    import datasets

    return datasets.concatenate_datasets([ctx.upstream.hub(REPO, c, REVISION) for c in CONFIGS])


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    rows = ctx.cached(REPO, lambda: _both(ctx))
    item = index_row(rows, int(row["src_id"].rsplit("_", 1)[1]), row["question_id"])
    context = "\n\n".join(passage["text"] for passage in item["ctxs"])
    asked = [message["content"] for message in item["messages"] if message["role"] == "user"]
    return [templates.CHATRAG.format(context=context, question=asked[0]), *asked[1:]]
