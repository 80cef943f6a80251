"""Humanity's Last Exam (cais/hle, gated): the question, or a few-shot prompt of N tokens.

Qualitative rows take the question by id. Throughput rows take a question from the test half
of a seeded 50/50 split and put before it demonstrations of its category from the train half
(text-only rows), drawn by the config's one generator until the prompt reaches N tokens.
"""

from __future__ import annotations

from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data.prepare import templates, tokens
from specbench.data.prepare.context import Context, first_match

REPO = "cais/hle"
REVISION = "021a3d71f516a7ac28ceb8d284969902edf1edeb"


def _full(ctx: Context) -> Any:
    return ctx.cached(REPO, lambda: ctx.upstream.hub(REPO, None, REVISION))


def _split(ctx: Context) -> tuple[Any, dict[str, list[tuple[str, list[int]]]]]:
    """The test half, and the train half's demonstrations (text, tokens) per category."""
    halves = _full(ctx).train_test_split(test_size=0.5, shuffle=True, seed=42)
    enc = tokens.encoder()
    demos: dict[str, list[tuple[str, list[int]]]] = {}
    for item in halves["train"]:
        if item["image"] != "":
            continue
        text = "Question: " + item["question"] + "\n\nAnswer: " + item["rationale"] + "\n\n"
        demos.setdefault(item["category"], []).append(
            (text, enc.encode(text, disallowed_special=()))
        )
    return halves["test"], demos


def resolve(row: dict[str, Any], ctx: Context) -> list[str]:
    where = f"question_id {row['question_id']}"
    if ctx.config == "qualitative":
        return [first_match(_full(ctx), "id", row["src_id"], where)["question"]]
    target = ctx.num_tokens(where)
    test, demos = ctx.cached(("hle", "split"), lambda: _split(ctx))
    question = first_match(test, "id", row["src_id"], where)
    enc = tokens.encoder()
    # The upstream code encodes these two with tiktoken's default special-token check.
    prompt = enc.encode(templates.HLE_HEAD + question["category"] + ":\n\n")
    asked = enc.encode(question["question"])
    pool = demos.get(question["category"], [])
    if not pool:
        raise SpecbenchError(f"{where}: no text-only HLE demonstration of its category")
    rng = ctx.hle_rng()
    length = len(prompt) + len(asked)
    while length < target:
        # What pandas' DataFrame.sample(1, random_state=rng) draws.
        _text, demo = pool[int(rng.choice(len(pool), size=1, replace=False)[0])]
        length += len(demo)
        prompt += demo
    return [str(enc.decode(prompt[: target - len(asked) + 1] + asked))]
