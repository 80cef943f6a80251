"""Ada-LEval StackSelect and TextSort (JSON files by URL), fitted to N o200k tokens.

StackSelect keeps the right answer and the other answers up to the first that alone would
pass the budget (each answer is tested on its own, not cumulatively), shuffles them with
Python's `random` seeded 42 in every call, then pads or cuts. TextSort swaps the instruction
for one asking for the parts written out in order, then pads or cuts.
"""

from __future__ import annotations

import random
from typing import Any

from specbench.data.prepare import templates, tokens
from specbench.data.prepare.context import Context, first_match, index_row


def _stackselect_prompt(
    question: str, answers: list[str], right: str, budget: int, flavour: str = "model-optimizer"
) -> str:
    head = (
        templates.pick("STACKSELECT_INTRO", flavour)
        + "The question is given below.\n"
        + question
        + "\n\nPossible answers are given below.\n"
    )
    right_index = int(right.strip("A")) - 1
    fixed = (
        tokens.count(head)
        + tokens.count(templates.STACKSELECT_END)
        + tokens.count(f"{right}:\n\n{answers[right_index]}\n\n")
    )
    last = 0
    for index, answer in enumerate(answers):
        if index == right_index:
            continue
        if fixed + tokens.count(f"A{index + 1}:\n\n{answer}\n\n") > budget:
            break
        last = index
    kept = list(answers[: last + 1])
    if last < right_index:
        kept.insert(0, answers[right_index])
    random.Random(42).shuffle(kept)
    listed = "".join(f"A{number}:\n\n{answer}\n\n" for number, answer in enumerate(kept, start=1))
    return head + listed + templates.STACKSELECT_END


def resolve_stackselect(row: dict[str, Any], ctx: Context) -> list[str]:
    where = f"question_id {row['question_id']}"
    target = ctx.num_tokens(where)
    rows = ctx.cached(("json", row["source"]), lambda: ctx.upstream.json([row["source"]]))
    item = first_match(rows, "question_id", row["src_id"], where)
    answers = list(item["all_answers"])
    prompt = _stackselect_prompt(item["question"], answers, item["answer"], target, ctx.flavour)
    return [tokens.fit(prompt, target)]


def resolve_textsort(row: dict[str, Any], ctx: Context) -> list[str]:
    where = f"question_id {row['question_id']}"
    target = ctx.num_tokens(where)
    rows = ctx.cached(("json", row["source"]), lambda: ctx.upstream.json([row["source"]]))
    prompt = index_row(rows, int(row["src_id"].split("_")[1]), where)["prompt"]
    prompt = prompt.replace(
        templates.TEXTSORT_ORIGINAL, templates.pick("TEXTSORT_REPLACEMENT", ctx.flavour), 1
    )
    return [tokens.fit(prompt, target)]
