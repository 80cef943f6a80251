"""CodeContests (deepmind/code_contests): the problem description by name."""

from __future__ import annotations

from typing import Any

from specbench.data.prepare.context import Context, first_match, template

REPO = "deepmind/code_contests"
REVISION = "802411c3010cb00d1b05bad57ca77365a3c699d6"


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    rows = ctx.cached(REPO, lambda: ctx.upstream.hub(REPO, None, REVISION))
    problem = first_match(rows, "name", row["src_id"], f"question_id {row['question_id']}")
    return [template(row).format(question=problem["description"])]
