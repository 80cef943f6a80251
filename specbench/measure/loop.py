"""Closed-loop load: exactly `concurrency` conversations in flight while work remains.

Each slot takes the next conversation and replays its turns in order: a later turn
carries the target's own earlier answers as history (chat), or the previous prompt and
answer as a prefix (completions). The answer is taken from the record before `on_record`
sees it, so a callback that drops outputs from the saved record (outputs not kept) never
empties the history: at every temperature a later turn carries the model's own answer.

A failed turn ends its conversation; its later turns are never sent, and each still gets a
record, with error type `skipped_after_failed_turn`, so lost work counts as failed and a
speculative and a baseline cell keep the same population of requests. The rest of the work
goes on. One record per turn reaches `on_record` as soon as that turn ends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from specbench.client.record import RequestRecord
from specbench.client.sender import Api, Prompt, Sender
from specbench.common import interrupt
from specbench.data.conversation import Conversation
from specbench.measure.history import streamed_text

T = TypeVar("T")

#: Error type of the records of turns never sent because an earlier turn failed.
SKIPPED_AFTER_FAILED_TURN = "skipped_after_failed_turn"


def run_event_loop(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, on uvloop when it is installed; a stop signal cancels `main`.

    uvloop's event loop costs the client less CPU per streamed chunk (epoll wake-ups,
    timer handles and task steps in C); without it, the standard loop does the same work.
    A SIGINT or SIGTERM (see `specbench.common.interrupt`) cancels the task at its next
    `await` and ends here as `Interrupted`, never as an exception inside an I/O callback.
    """

    async def guarded() -> T:
        task = asyncio.current_task()
        assert task is not None
        with interrupt.cancel_on_stop(task):
            try:
                return await main
            except asyncio.CancelledError:
                interrupt.check()  # cancelled by a stop signal: say so
                raise

    try:
        import uvloop
    except ImportError:
        return asyncio.run(guarded())
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(guarded())


def build_prompt(
    api: Api,
    turns: Sequence[str],
    answers: Sequence[str],
    reasoning: Sequence[str | None] = (),
) -> Prompt:
    """The prompt of turn len(answers): all earlier turns with the target's own answers.

    `reasoning[i]`, when the server sent answer i's thinking apart, goes back in the
    assistant message's `reasoning` field (vLLM 0.32's name; it renames
    `reasoning_content`): the chat template then keeps or drops earlier thinking by its
    own rule (`history.THINKING_REPLAY`). Inline `<think>` text stays in the content.
    """
    if api == "chat":
        messages: list[dict[str, str]] = []
        for index, answer in enumerate(answers):
            messages.append({"role": "user", "content": turns[index]})
            message = {"role": "assistant", "content": answer}
            thinking = reasoning[index] if index < len(reasoning) else None
            if thinking is not None:
                message["reasoning"] = thinking
            messages.append(message)
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
    replay: Callable[[RequestRecord], str] = streamed_text,
    should_stop: Callable[[], bool] | None = None,
) -> int:
    """Replay every conversation with `concurrency` slots; return the end instant (perf ns).

    `replay` turns a finished turn into the answer later turns carry as history (taken
    before `on_record`, which may drop the outputs it does not keep). Once `should_stop()`
    is true no slot takes a new conversation; those in flight finish.
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
            reasoning: list[str | None] = []
            failed: RequestRecord | None = None
            for turn in range(len(conversation.turns)):
                record = RequestRecord(
                    question_id=conversation.question_id,
                    turn=turn,
                    num_turns=len(conversation.turns),
                    category=conversation.category,
                )
                if failed is not None:
                    record.start_ns = time.perf_counter_ns() - window_start_ns
                    record.error_type = SKIPPED_AFTER_FAILED_TURN
                    record.error_message = (
                        f"not sent: turn {failed.turn} of this conversation failed "
                        f"({failed.error_type})"
                    )
                    on_record(record)
                    continue
                if interrupt.requested() is not None:
                    return  # a stop signal sends no further request; the cell is discarded
                prompt = build_prompt(api, conversation.turns, answers, reasoning)
                start_ns = time.perf_counter_ns()
                record.start_ns = start_ns - window_start_ns
                await sender.send(prompt, record)
                record.duration_ns = time.perf_counter_ns() - start_ns
                # Before on_record: it may drop the text from the saved record.
                answer = replay(record) if record.ok else ""
                # Decoded replay already holds the thinking (the ids include it).
                thinking = record.reasoning_text if replay is streamed_text else None
                on_record(record)
                if not record.ok:
                    failed = record
                    continue
                answers.append(answer)
                reasoning.append(thinking)

    async with asyncio.TaskGroup() as group:
        for _ in range(concurrency):
            group.create_task(slot())
    return time.perf_counter_ns()
