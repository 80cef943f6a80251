"""The aiohttp client on real vLLM 0.32 SSE bytes, replayed cut at random places."""

from __future__ import annotations

import random
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from specbench.client.record import RequestRecord
from specbench.client.sender import AiohttpSender, RequestSettings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm"


async def replay_server(stream: bytes, seed: int) -> TestServer:
    """Serves `stream` on both routes, in random pieces with a flush after each."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        rng = random.Random(seed)
        position = 0
        while position < len(stream):
            size = rng.randint(1, 97)
            await response.write(stream[position : position + size])
            position += size
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    app.router.add_post("/v1/completions", handler)
    server = TestServer(app)
    await server.start_server()
    return server


async def measure(name: str, api: str, seed: int) -> RequestRecord:
    server = await replay_server((FIXTURES / name).read_bytes(), seed)
    try:
        async with aiohttp.ClientSession() as session:
            settings = RequestSettings(model="tiny-repeat", api=api)  # type: ignore[arg-type]
            sender = AiohttpSender(session, str(server.make_url("")).rstrip("/"), settings)
            record = RequestRecord(question_id="q", turn=0, num_turns=1, category="c")
            await sender.send("prompt" if api == "completions" else [], record)
            return record
    finally:
        await server.close()


@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_chat_stream(seed):
    record = await measure("chat_stream_spec.sse", "chat", seed)
    assert record.ok, record.error_message
    # Role-only first chunk carries no token; then one engine step per chunk.
    assert record.chunk_tokens == [1, 4, 4, 4, 3]
    assert record.output_tokens == 16 and record.input_tokens == 27
    assert record.token_count_source == "usage"
    assert record.output_token_ids == [32] * 16
    assert record.finish_reason == "length"
    assert record.spec_decode["mean_acceptance_length"] == 4.0
    assert record.spec_decode["acceptance_histogram"] == [0, 0, 0, 4]
    assert 0 < record.ttft_ns <= record.e2e_ns
    assert (
        record.ttft_ns == record.chunk_offsets_ns[0]
        and record.e2e_ns == record.chunk_offsets_ns[-1]
    )


@pytest.mark.parametrize("seed", [0, 1])
async def test_completions_streams_even_and_odd(seed):
    even = await measure("completions_stream_spec.sse", "completions", seed)
    assert even.ok and even.chunk_tokens == [1, 4, 4, 4, 4, 4, 4, 4, 1]
    assert even.output_tokens == 30 and even.spec_decode["num_spec_steps"] == 8
    odd = await measure("completions_stream_spec_odd.sse", "completions", seed)
    assert odd.ok and odd.chunk_tokens == [1] * 6
    assert odd.spec_decode["acceptance_histogram"] == [5, 0, 0, 0]


async def test_a_stream_cut_before_done_is_a_failed_record():
    data = (FIXTURES / "chat_stream_spec.sse").read_bytes()
    record_stream = data[: data.index(b"data: [DONE]")]
    server = await replay_server(record_stream, 0)
    try:
        async with aiohttp.ClientSession() as session:
            sender = AiohttpSender(
                session, str(server.make_url("")).rstrip("/"), RequestSettings(model="m")
            )
            record = RequestRecord(question_id="q", turn=0, num_turns=1, category="c")
            await sender.send([], record)
    finally:
        await server.close()
    assert record.error_type == "incomplete_stream"
