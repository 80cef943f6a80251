"""CNN/DailyMail (abisee/cnn_dailymail, config 3.0.0): the article by id into the row's template."""

from __future__ import annotations

from typing import Any

from specbench.data.prepare.context import Context, first_match, template

REPO = "abisee/cnn_dailymail"
#: NVIDIA's code loads the default branch; a mirror records the commit it downloaded.
REVISION = None


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    rows = ctx.cached(REPO, lambda: ctx.upstream.hub(REPO, "3.0.0", REVISION))
    article = first_match(rows, "id", row["src_id"], f"question_id {row['question_id']}")
    return [template(row).format(article=article["article"])]
