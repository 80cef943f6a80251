"""A stop signal ends with its `stop_on_signals` block: nothing later in the process sees it."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from specbench.common import interrupt
from specbench.data.conversation import Conversation
from specbench.measure.loop import run_closed_loop


class _Echo:
    async def send(self, prompt: object, record: object) -> None:
        record.chunk_tokens = [1]  # type: ignore[attr-defined]
        record.output_text = "ok"  # type: ignore[attr-defined]


def test_a_signal_inside_a_block_stops_it_and_not_what_runs_after() -> None:
    with pytest.raises(interrupt.Interrupted), interrupt.stop_on_signals():
        os.kill(os.getpid(), signal.SIGTERM)
        interrupt.check()
    assert interrupt.requested() is None
    # A closed loop run afterwards in the same process sends its requests (it used to
    # return at once, its slots seeing the old stop).
    sent: list[object] = []
    conversation = Conversation(question_id="q", category="c", turns=("a", "b"))
    asyncio.run(
        run_closed_loop([conversation], 1, _Echo(), "chat", sent.append, window_start_ns=0)  # type: ignore[arg-type]
    )
    assert len(sent) == 2
