"""RoleBench (ZenMoore/RoleBench, files of the hub repo by URL): a role's profile and questions."""

from __future__ import annotations

import re
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data.prepare.context import Context, index_row, template

REPO = "ZenMoore/RoleBench"
REVISION = "a57ed54f9613921e4a5f1b63601a558cd5acf971"
ROLES_URL = f"https://huggingface.co/datasets/{REPO}/raw/{REVISION}/profiles-eng/desc.json"


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    where = f"question_id {row['question_id']}"
    split = row["src_id"].split("_")[1]
    url = row["source"].replace("tree", "raw") + f"/{split}/role_specific/test.jsonl"
    rows = ctx.cached(("json", url), lambda: ctx.upstream.json([url]))
    roles = ctx.cached(("json", ROLES_URL), lambda: ctx.upstream.json([ROLES_URL]))
    picks = [int(number) for number in re.findall(r"_(\d+)", row["src_id"])][: len(row["turns"])]
    items = [index_row(rows, pick, where) for pick in picks]
    role = items[0]["role"]
    if role not in roles.column_names:
        raise SpecbenchError(f"{where}: role {role!r} has no profile in {ROLES_URL}")
    first = template(row).format(role_name=role, role_description_and_catchphrases=roles[role][0])
    later = [
        item["question"].removeprefix(f"{role}, ").removeprefix(f" {role},") for item in items[1:]
    ]
    return [first + "\n" + items[0]["question"], *later]
