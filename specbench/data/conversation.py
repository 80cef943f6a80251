"""The unit of work the load generator replays: one question with one or more user turns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from specbench.common.errors import SpecbenchError


@dataclass(frozen=True, slots=True)
class Conversation:
    """One dataset row, ready to send.

    `turns` are user messages. A multi-turn row is replayed turn by turn inside one
    concurrency slot; each later turn carries the target's own earlier answers as history.
    `max_tokens`, when set, overrides the workload's output cap for this row.
    """

    question_id: str
    category: str
    turns: tuple[str, ...]
    sub_category: str | None = None
    source: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.turns:
            raise ValueError(f"conversation {self.question_id!r} has no turns")


def check_turns(turns: Any, where: str) -> None:
    """Refuse a row's `turns` unless it is a non-empty list of non-empty strings."""
    if (
        not isinstance(turns, list)
        or not turns
        or not all(isinstance(turn, str) and turn for turn in turns)
    ):
        raise SpecbenchError(
            f"{where}: field 'turns' must be a non-empty list of non-empty strings"
        )
