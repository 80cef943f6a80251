"""Which rows of a dataset run, and in which order: category filter and stratified sampling.

Sampling is a seeded round-robin over categories, so `--num-prompts 64` on the qualitative
split takes 5 or 6 rows from each of the 11 domains rather than 64 rows of whatever comes
first. The same seed always gives the same rows in the same order.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from specbench.common.errors import SpecbenchError
from specbench.data.conversation import Conversation


@dataclass(frozen=True)
class ConversationSelection:
    """The chosen conversations plus any warnings the user should see."""

    conversations: tuple[Conversation, ...]
    warnings: tuple[str, ...] = ()


def _category_rng(seed: int, category: str) -> random.Random:
    # Seeded per category so one category's sample does not change when another is filtered out.
    digest = hashlib.sha256(f"{seed}\x00{category}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def filter_categories(
    conversations: Sequence[Conversation], categories: Sequence[str], *, where: str
) -> list[Conversation]:
    """Keep rows whose category is in `categories` (all rows when empty).

    A requested category with no rows is an error naming the categories that exist.
    """
    if not categories:
        return list(conversations)
    present = sorted({conversation.category for conversation in conversations})
    missing = [category for category in categories if category not in present]
    if missing:
        raise SpecbenchError(
            f"{where}: unknown category {missing[0]!r}; available: {', '.join(present)}"
        )
    wanted = set(categories)
    return [conversation for conversation in conversations if conversation.category in wanted]


def stratified_sample(
    conversations: Sequence[Conversation],
    num_prompts: int | None,
    *,
    seed: int = 0,
    strict: bool = False,
    where: str = "dataset",
) -> ConversationSelection:
    """Take `num_prompts` rows spread evenly over categories (round-robin), seeded.

    Within each category rows are sorted by `question_id`, then shuffled with a seed derived
    from `seed` and the category name, so file order does not matter. The order in which
    categories take turns is shuffled with `seed`, so the categories that get one extra row
    when `num_prompts` does not divide evenly vary with the seed. The result is in
    round-robin order (categories interleaved). `num_prompts=None` keeps every
    row in file order. Asking for more rows than exist warns and keeps all, or raises when
    `strict`.
    """
    rows = list(conversations)
    if num_prompts is None:
        return ConversationSelection(tuple(rows))
    if num_prompts < 1:
        raise SpecbenchError(f"--num-prompts must be at least 1, got {num_prompts}")
    if num_prompts >= len(rows):
        if num_prompts == len(rows):
            return ConversationSelection(tuple(rows))
        message = f"{where}: --num-prompts {num_prompts} exceeds the {len(rows)} rows available"
        if strict:
            raise SpecbenchError(message)
        return ConversationSelection(tuple(rows), (f"{message}; using all {len(rows)}",))
    groups: dict[str, list[Conversation]] = {}
    for conversation in rows:
        groups.setdefault(conversation.category, []).append(conversation)
    for category, members in groups.items():
        # Sorted by id first, so the sample depends on the rows and the seed, not file order.
        members.sort(key=lambda conversation: conversation.question_id)
        _category_rng(seed, category).shuffle(members)
    order = sorted(groups)
    random.Random(seed).shuffle(order)
    chosen: list[Conversation] = []
    depth = 0
    while len(chosen) < num_prompts:
        for category in order:
            if depth < len(groups[category]):
                chosen.append(groups[category][depth])
                if len(chosen) == num_prompts:
                    break
        depth += 1
    return ConversationSelection(tuple(chosen))
