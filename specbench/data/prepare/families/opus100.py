"""OPUS-100 (Helsinki-NLP/opus-100): one translation pair, by config and position.

The template gets the pair as a dict, so `{question[de]}` picks a language (`str.format`).
"""

from __future__ import annotations

from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data.prepare.context import Context, index_row, template

REPO = "Helsinki-NLP/opus-100"
REVISION = "805090dc28bf78897da9641cdf08b61287580df9"


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    parts = row["src_id"].split("_")
    if len(parts) != 3:
        raise SpecbenchError(
            f"question_id {row['question_id']}: src_id {row['src_id']!r} is not "
            "<name>_<pair>_<index>"
        )
    pair, index = parts[1], int(parts[2])
    rows = ctx.cached((REPO, pair), lambda: ctx.upstream.hub(REPO, pair, REVISION))
    return [
        template(row).format(question=index_row(rows, index, row["question_id"])["translation"])
    ]
