"""Closed-loop load: exactly `concurrency` conversations in flight while work remains.

Each slot takes the next conversation and replays its turns in order: a later turn
carries the target's own earlier answers as history (chat), or the previous prompt and
answer as a prefix (completions). A failed turn ends its conversation; the rest of the
work goes on. One record per turn reaches `on_record` as soon as that turn ends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from specbench.client.record import RequestRecord
from specbench.client.sender import Api, Prompt, Sender
from specbench.data.conversation import Conversation

T = TypeVar("T")


def run_event_loop(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, on uvloop when it is installed.

    uvloop's event loop costs the client less CPU per streamed chunk (epoll wake-ups,
    timer handles and task steps in C); without it, the standard loop does the same work.
    """
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def build_prompt(api: Api, turns: Sequence[str], answers: Sequence[str]) -> Prompt:
    """The prompt of turn len(answers): all earlier turns with the target's own answers."""
    if api == "chat":
        messages: list[dict[str, str]] = []
        for index, answer in enumerate(answers):
            messages.append({"role": "user", "content": turns[index]})
            messages.append({"role": "assistant", "content": answer})
        messages.append({"role": "user", "content": turns[len(answers)]})
        return messages
    parts: list[str] = []
    for index, answer in enumerate(answers):
        parts.extend((turns[index], answer))
    parts.append(turns[len(answers)])
    return "\n".join(parts)


async def run_closed_loop(
    conversations: Iterable[Conversation],
    concurrency: int,
    sender: Sender,
    api: Api,
    on_record: Callable[[RequestRecord], None],
    *,
    window_start_ns: int,
    should_stop: Callable[[], bool] | None = None,
) -> int:
    """Replay every conversation with `concurrency` slots; return the end instant (perf ns).

    Once `should_stop()` is true no slot takes a new conversation; those in flight finish.
    """
    if concurrency <= 0:
        raise ValueError(f"concurrency must be positive, got {concurrency}")
    work = iter(conversations)

    def next_conversation() -> Iterator[Conversation]:
        while should_stop is None or not should_stop():
            conversation = next(work, None)
            if conversation is None:
                return
            yield conversation

    async def slot() -> None:
        # the shared iterator hands each conversation to one slot
        for conversation in next_conversation():
            answers: list[str] = []
            for turn in range(len(conversation.turns)):
                record = RequestRecord(
                    question_id=conversation.question_id,
                    turn=turn,
                    num_turns=len(conversation.turns),
                    category=conversation.category,
                )
                prompt = build_prompt(api, conversation.turns, answers)
                record.start_ns = time.perf_counter_ns() - window_start_ns
                await sender.send(prompt, record)
                on_record(record)
                if not record.ok:
                    break
                answers.append(record.output_text or "")

    async with asyncio.TaskGroup() as group:
        for _ in range(concurrency):
            group.create_task(slot())
    return time.perf_counter_ns()
