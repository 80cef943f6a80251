"""The client's idle timeout (`--request-timeout`) against a real local streaming server.

The timeout is "seconds without data", not a total: a slow stream whose chunks keep
coming must succeed even when it lasts longer than the timeout, a stalled one must fail
as a `timeout` record, and cancelling the caller must still raise CancelledError.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import aiohttp
import orjson
import pytest
from aiohttp import web

from specbench.client.record import RequestRecord
from specbench.client.sender import AiohttpSender, RequestSettings


def _chunk(completion_tokens: int) -> bytes:
    body = {
        "choices": [{"index": 0, "text": "x", "token_ids": [7], "finish_reason": None}],
        "usage": {"prompt_tokens": 3, "completion_tokens": completion_tokens},
    }
    return b"data: " + orjson.dumps(body) + b"\n\n"


async def _stream(request: web.Request) -> web.StreamResponse:
    """`/slow`: 6 chunks 0.1 s apart; `/gappy`: 2 chunks 0.5 s apart; `/stall`: 1, then nothing."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    if request.path == "/stall/v1/completions":
        await response.write(_chunk(1))
        await asyncio.sleep(30)
        return response
    gap, count = (0.5, 2) if request.path.startswith("/gappy") else (0.1, 6)
    for index in range(count):
        await asyncio.sleep(gap)
        await response.write(_chunk(index + 1))
    await response.write(b"data: [DONE]\n\n")
    return response


@pytest.fixture
async def base_url() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/slow/v1/completions", _stream)
    app.router.add_post("/stall/v1/completions", _stream)
    app.router.add_post("/gappy/v1/completions", _stream)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def _record() -> RequestRecord:
    return RequestRecord(question_id="q", turn=0, num_turns=1, category="c")


async def _send(url: str, timeout_s: float, record: RequestRecord) -> None:
    settings = RequestSettings(model="m", api="completions", max_tokens=8)
    async with aiohttp.ClientSession() as session:
        sender = AiohttpSender(session, url, settings, request_timeout_s=timeout_s)
        await sender.send("prompt", record)


async def test_stream_longer_than_the_timeout_succeeds_while_chunks_keep_coming(
    base_url: str,
) -> None:
    record = _record()
    started = time.monotonic()
    await _send(base_url + "/slow", 0.3, record)  # 6 chunks 0.1 s apart: 0.6 s in all
    assert time.monotonic() - started >= 0.6
    assert record.error_type is None, record.error_message
    assert record.output_tokens == 6
    assert record.chunk_tokens == [1] * 6


async def test_stalled_stream_becomes_a_timeout_record(base_url: str) -> None:
    record = _record()
    started = time.monotonic()
    await _send(base_url + "/stall", 0.3, record)
    elapsed = time.monotonic() - started
    assert record.error_type == "timeout"
    assert record.error_message == "no data for 0.3 s"
    assert 0.3 <= elapsed < 2.0
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_gap_longer_than_the_timeout_fails_even_after_chunks(base_url: str) -> None:
    record = _record()
    await _send(base_url + "/gappy", 0.3, record)
    assert record.error_type == "timeout"


async def test_cancelling_the_caller_still_raises_cancelled_error(base_url: str) -> None:
    record = _record()
    task = asyncio.create_task(_send(base_url + "/stall", 30.0, record))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert record.error_type is None
