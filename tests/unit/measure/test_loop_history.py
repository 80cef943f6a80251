"""The closed loop's multi-turn replay, against the in-process emulator with a real sender.

The emulator logs every prompt it receives (`prompt_log`), so the test reads what the
server was actually sent, not what the client meant to send.
"""

from __future__ import annotations

import time
from pathlib import Path

import aiohttp
import orjson
from aiohttp.test_utils import TestServer

from specbench.client.record import RequestRecord
from specbench.client.sender import AiohttpSender, RequestSettings
from specbench.data.conversation import Conversation
from specbench.emulator import build_app, make_emulator_config
from specbench.measure.loop import SKIPPED_AFTER_FAILED_TURN, run_closed_loop

FAST = {"prefill_ms": 0.0, "step_ms": 0.0, "per_request_step_ms": 0.0}


async def replay(
    conversations: list[Conversation], log: Path, temperature: float, max_model_len: int = 4096
) -> tuple[list[RequestRecord], dict[tuple[str, int], str]]:
    """Replay at `temperature`, dropping outputs from the records; also return the texts."""
    config = make_emulator_config(prompt_log=str(log), max_model_len=max_model_len, **FAST)
    server = TestServer(build_app(config))
    await server.start_server()
    records: list[RequestRecord] = []
    texts: dict[tuple[str, int], str] = {}

    def on_record(record: RequestRecord) -> None:
        # As measure_cell does when outputs are not kept (every T > 0 by default).
        texts[(record.question_id, record.turn)] = record.output_text or ""
        record.output_text = None
        record.output_token_ids = None
        records.append(record)

    try:
        async with aiohttp.ClientSession() as session:
            base = str(server.make_url("")).rstrip("/")
            settings = RequestSettings(
                model="specbench-emulator", max_tokens=12, temperature=temperature
            )
            sender = AiohttpSender(session, base, settings)
            await run_closed_loop(
                conversations, 2, sender, "chat", on_record, window_start_ns=time.perf_counter_ns()
            )
    finally:
        await server.close()
    return records, texts


async def test_later_turns_carry_the_answers_even_when_outputs_are_dropped(
    tmp_path: Path,
) -> None:
    conversations = [
        Conversation(f"q{i}", "writing", (f"first {i}", f"second {i}", f"third {i}"))
        for i in range(4)
    ]
    log = tmp_path / "prompts.jsonl"
    records, texts = await replay(conversations, log, temperature=0.7)
    assert len(records) == 12 and all(r.ok for r in records)
    assert all(r.output_text is None for r in records)  # the saved records keep no text
    received = [orjson.loads(line)["messages"] for line in log.read_bytes().splitlines()]
    assert len(received) == 12
    later = [m for m in received if len(m) > 1]
    assert len(later) == 8  # turns 2 and 3 of 4 conversations
    for messages in later:
        question = messages[0]["content"].split()[-1]
        answers = [m["content"] for m in messages if m["role"] == "assistant"]
        assert len(answers) == (len(messages) - 1) // 2
        for turn, answer in enumerate(answers):
            # The emulator's own answer to that turn, 12 tokens " tok<id>", never empty.
            assert answer == texts[(f"q{question}", turn)]
            assert len(answer.split()) == 12


async def test_a_failed_turn_skips_the_rest_of_its_conversation_as_failed(
    tmp_path: Path,
) -> None:
    # Turn 2 of q0 is longer than the emulator's 64-token context: HTTP 400.
    conversations = [
        Conversation("q0", "qa", ("short", "long " * 80, "third", "fourth")),
        Conversation("q1", "qa", ("fine", "also fine")),
    ]
    records, _ = await replay(conversations, tmp_path / "p.jsonl", 0.7, max_model_len=64)
    by_key = {(r.question_id, r.turn): r for r in records}
    assert len(records) == 6  # every turn has a record, sent or not
    assert by_key[("q0", 0)].ok and by_key[("q1", 0)].ok and by_key[("q1", 1)].ok
    assert by_key[("q0", 1)].error_type == "http_400"
    for turn in (2, 3):
        skipped = by_key[("q0", turn)]
        assert skipped.error_type == SKIPPED_AFTER_FAILED_TURN
        assert skipped.error_message == "not sent: turn 1 of this conversation failed (http_400)"
        assert skipped.duration_ns is None
    logged = [orjson.loads(line) for line in (tmp_path / "p.jsonl").read_bytes().splitlines()]
    # Logged: the 3 accepted prompts (the refused one is not); the skipped turns never came.
    assert len(logged) == 3
    assert all("third" not in str(entry) and "fourth" not in str(entry) for entry in logged)
