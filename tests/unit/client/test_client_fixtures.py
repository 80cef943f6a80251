"""Both clients (aiohttp, openai SDK) on real vLLM 0.32 SSE bytes, replayed cut at random
places; also with the per-chunk usage stripped (a server without continuous usage stats)."""

from __future__ import annotations

import random
from pathlib import Path

import aiohttp
import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from specbench.client.openai_sender import OpenAISender
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


def without_continuous_usage(stream: bytes) -> bytes:
    """The same stream as a server sends it with `include_usage` only: usage on the last chunk."""
    events = []
    for event in stream.split(b"\n\n"):
        if event.startswith(b"data: {"):
            chunk = orjson.loads(event[len(b"data: ") :])
            if chunk.get("choices"):
                chunk.pop("usage", None)
            event = b"data: " + orjson.dumps(chunk)
        events.append(event)
    return b"\n\n".join(events)


async def send_to(server: TestServer, client: str, api: str) -> RequestRecord:
    base_url = str(server.make_url("")).rstrip("/")
    settings = RequestSettings(model="tiny-repeat", api=api)  # type: ignore[arg-type]
    record = RequestRecord(question_id="q", turn=0, num_turns=1, category="c")
    prompt = "prompt" if api == "completions" else [{"role": "user", "content": "hi"}]
    if client == "openai":
        sender = OpenAISender(
            base_url, settings, api_key=None, request_timeout_s=30, max_connections=1
        )
        try:
            await sender.send(prompt, record)
        finally:
            await sender.close()
        return record
    async with aiohttp.ClientSession() as session:
        await AiohttpSender(session, base_url, settings).send(prompt, record)
    return record


async def measure(
    name: str, api: str, seed: int, client: str = "aiohttp", continuous_usage: bool = True
) -> RequestRecord:
    stream = (FIXTURES / name).read_bytes()
    if not continuous_usage:
        stream = without_continuous_usage(stream)
    server = await replay_server(stream, seed)
    try:
        return await send_to(server, client, api)
    finally:
        await server.close()


@pytest.mark.parametrize("client", ["aiohttp", "openai"])
@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_chat_stream(seed, client):
    record = await measure("chat_stream_spec.sse", "chat", seed, client)
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


@pytest.mark.parametrize("client", ["aiohttp", "openai"])
@pytest.mark.parametrize("seed", [0, 1])
async def test_completions_streams_even_and_odd(seed, client):
    even = await measure("completions_stream_spec.sse", "completions", seed, client)
    assert even.ok and even.chunk_tokens == [1, 4, 4, 4, 4, 4, 4, 4, 1]
    assert even.output_tokens == 30 and even.spec_decode["num_spec_steps"] == 8
    odd = await measure("completions_stream_spec_odd.sse", "completions", seed, client)
    assert odd.ok and odd.chunk_tokens == [1] * 6
    assert odd.spec_decode["acceptance_histogram"] == [5, 0, 0, 0]


@pytest.mark.parametrize("client", ["aiohttp", "openai"])
@pytest.mark.parametrize("api", ["chat", "completions"])
async def test_without_continuous_usage_counts_token_ids_and_keeps_the_total(client, api):
    name = "chat_stream_spec.sse" if api == "chat" else "completions_stream_spec.sse"
    exact = await measure(name, api, 0, client)
    record = await measure(name, api, 0, client, continuous_usage=False)
    assert record.ok, record.error_message
    assert record.token_count_source == "token_ids"
    # token_ids give the same per-chunk counts and the final usage chunk the same total.
    assert record.chunk_tokens == exact.chunk_tokens
    assert record.output_tokens == exact.output_tokens == sum(record.chunk_tokens)
    assert record.input_tokens == exact.input_tokens
    assert record.spec_decode == exact.spec_decode


@pytest.mark.parametrize("client", ["aiohttp", "openai"])
async def test_a_stream_cut_before_done_is_a_failed_record(client):
    data = (FIXTURES / "chat_stream_spec.sse").read_bytes()
    # Cut after the first token chunk: no finish_reason, no [DONE].
    second = data.index(b"data: ", data.index(b"data: ") + 1)
    server = await replay_server(data[: data.index(b"data: ", second + 1)], 0)
    try:
        record = await send_to(server, client, "chat")
    finally:
        await server.close()
    assert record.error_type == "incomplete_stream"
    assert record.ttft_ns is None and record.output_tokens is None


async def test_aiohttp_a_stream_cut_just_before_done_is_a_failed_record():
    data = (FIXTURES / "chat_stream_spec.sse").read_bytes()
    server = await replay_server(data[: data.index(b"data: [DONE]")], 0)
    try:
        record = await send_to(server, "aiohttp", "chat")
    finally:
        await server.close()
    assert record.error_type == "incomplete_stream"


@pytest.mark.parametrize("client", ["aiohttp", "openai"])
@pytest.mark.parametrize("seed", [0, 3])
async def test_the_servers_own_timing_is_kept_and_preferred(seed, client):
    """vLLM 0.32 with --enable-per-request-metrics: its timing fields are recorded verbatim,
    and the decode time is the server's generation time, not the client's clock."""
    record = await measure("chat_stream_timing.sse", "chat", seed, client)
    assert record.ok, record.error_message
    assert record.server_timing == {
        "time_to_first_token_ms": 10.156788999893251,
        "generation_time_ms": 74.99830699998711,
        "queue_time_ms": 0.030895000008968054,
        "mean_itl_ms": 4.999887133332474,
        "tokens_per_second": 187.89245449294637,
    }
    assert record.spec_decode["num_spec_steps"] == 2
    assert record.decode_ms == (74.99830699998711, "server")
    # The same stream without the flag's fields: no server timing, the client's clock.
    older = await measure("chat_stream_spec.sse", "chat", seed, client)
    assert older.server_timing is None
    # The replay server writes the stream in chunks, but a loaded client (one CI, six xdist
    # workers on two cores) read it all in one socket read: E2E = TTFT, and the client's
    # clock then has no decode time to give, which is the case the server's timing mends.
    if older.e2e_ns > older.ttft_ns:
        assert older.decode_ms == ((older.e2e_ns - older.ttft_ns) / 1e6, "client")
    else:
        assert older.e2e_ns == older.ttft_ns and older.decode_ms is None
