"""A minimal OpenAI-style streaming server that costs almost no CPU per chunk.

Used by `run_bench.py` to measure *client* overhead: the server must never be the limit,
so every SSE frame of a response is encoded once per (length, options) and replayed.
Each "step" writes the next frame to every open stream, as an engine step does, but a
stream whose socket buffer is full is skipped (backpressure): when the client is slower
than the server, frames queue in the kernel and the client reads several per wake-up,
exactly as it would behind a fast GPU server.

`GET /stats` returns the token chunks sent, the streaming requests and the `/metrics` GETs
so far: both clients scrape `/metrics` just before and just after their measured window,
which lets the driver read the client's CPU time at the window's edges.
Run: `python blast_server.py --port P [--step-ms 0] [--tokens-per-chunk 1]`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal

import orjson

MODEL = "blast"
_HIGH_WATER = 64 * 1024


def _event(payload: dict[str, object]) -> bytes:
    body = b"data: " + orjson.dumps(payload) + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(body), body)


def _frames(
    max_tokens: int, per_chunk: int, usage_each: bool, ids: bool, chat: bool
) -> list[bytes]:
    """Every chunked-encoding frame of one response: token chunks, usage chunk, [DONE]."""
    head = {"id": "cmpl-blast", "created": 1, "model": MODEL}
    head["object"] = "chat.completion.chunk" if chat else "text_completion"
    frames: list[bytes] = []
    if chat:
        role = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
        frames.append(_event(role))
    sent = 0
    while sent < max_tokens:
        count = min(per_chunk, max_tokens - sent)
        sent += count
        last = sent >= max_tokens
        text = " tok" * count
        choice: dict[str, object] = {"index": 0, "logprobs": None}
        if chat:
            choice["delta"] = {"content": text}
        else:
            choice["text"] = text
        choice["finish_reason"] = "length" if last else None
        choice["stop_reason"] = None
        if ids:
            choice["token_ids"] = list(range(100 + sent - count, 100 + sent))
        chunk: dict[str, object] = {**head, "choices": [choice]}
        if usage_each:
            chunk["usage"] = {
                "prompt_tokens": 16,
                "total_tokens": 16 + sent,
                "completion_tokens": sent,
            }
        frames.append(_event(chunk))
    usage = {"prompt_tokens": 16, "total_tokens": 16 + sent, "completion_tokens": sent}
    frames.append(_event({**head, "choices": [], "usage": usage}))
    frames.append(b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
    return frames


class _Stream:
    __slots__ = ("frames", "position", "protocol", "token_frames")

    def __init__(self, protocol: _Connection, frames: list[bytes]) -> None:
        self.protocol = protocol
        self.frames = frames
        self.position = 0
        # The last two frames (usage, [DONE]) carry no token (chat: the role frame counts).
        self.token_frames = len(frames) - 2


class _State:
    def __init__(self, per_chunk: int) -> None:
        self.per_chunk = per_chunk
        self.streams: list[_Stream] = []
        self.frames_sent = 0
        self.token_chunks_sent = 0
        self.requests = 0
        self.metrics_gets = 0
        self.cache: dict[tuple[int, bool, bool, bool], list[bytes]] = {}
        self.wake = asyncio.Event()


def _plain(status: str, body: bytes, content_type: bytes = b"application/json") -> bytes:
    return (
        b"HTTP/1.1 "
        + status.encode()
        + b"\r\ncontent-type: "
        + content_type
        + b"\r\ncontent-length: %d\r\n\r\n" % len(body)
        + body
    )


class _Connection(asyncio.Protocol):
    def __init__(self, state: _State) -> None:
        self.state = state
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        self.paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but behave as ones.
        self.transport = transport  # type: ignore[assignment]
        transport.set_write_buffer_limits(high=_HIGH_WATER)

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            method, path = head.split(" ", 2)[:2]
            self._handle(method, path.split("?")[0], body)

    def _handle(self, method: str, path: str, body: bytes) -> None:
        assert self.transport is not None
        state = self.state
        if method == "GET":
            if path == "/v1/models":
                models = {"object": "list", "data": [{"id": MODEL, "object": "model"}]}
                self.transport.write(_plain("200 OK", orjson.dumps(models)))
            elif path == "/metrics":
                state.metrics_gets += 1
                text = b"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 0\n"
                self.transport.write(_plain("200 OK", text, b"text/plain; version=0.0.4"))
            elif path == "/stats":
                stats = {
                    "frames_sent": state.frames_sent,
                    "token_chunks_sent": state.token_chunks_sent,
                    "requests": state.requests,
                    "metrics_gets": state.metrics_gets,
                }
                self.transport.write(_plain("200 OK", orjson.dumps(stats)))
            elif path == "/version":
                self.transport.write(_plain("200 OK", b'{"version":"blast"}'))
            else:
                self.transport.write(_plain("404 Not Found", b"{}"))
            return
        if path not in ("/v1/completions", "/v1/chat/completions"):
            self.transport.write(_plain("404 Not Found", b"{}"))
            return
        request = orjson.loads(body)
        chat = path.endswith("chat/completions")
        max_tokens = int(request.get("max_tokens") or request.get("max_completion_tokens") or 16)
        options = request.get("stream_options") or {}
        key = (
            max_tokens,
            bool(options.get("continuous_usage_stats")),
            bool(request.get("return_token_ids")),
            chat,
        )
        frames = state.cache.get(key)
        if frames is None:
            frames = state.cache[key] = _frames(max_tokens, state.per_chunk, *key[1:])
        state.requests += 1
        self.transport.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        state.streams.append(_Stream(self, frames))
        state.wake.set()


async def _pump(state: _State, step_s: float) -> None:
    """One frame per open stream per step; a stream whose client lags is skipped."""
    while True:
        if not state.streams:
            state.wake.clear()
            await state.wake.wait()
        alive: list[_Stream] = []
        for stream in state.streams:
            protocol = stream.protocol
            transport = protocol.transport
            if transport is None or transport.is_closing():
                continue
            if not protocol.paused:
                transport.write(stream.frames[stream.position])
                if stream.position < stream.token_frames:
                    state.token_chunks_sent += 1
                stream.position += 1
                state.frames_sent += 1
            if stream.position < len(stream.frames):
                alive.append(stream)
        state.streams = alive
        await asyncio.sleep(step_s)


async def serve(port: int, step_ms: float, per_chunk: int) -> None:
    state = _State(per_chunk)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Connection(state), "127.0.0.1", port, backlog=1024)
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    pump = asyncio.create_task(_pump(state, step_ms / 1000.0))
    await stop.wait()
    pump.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await pump
    server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--step-ms", type=float, default=0.0)
    parser.add_argument("--tokens-per-chunk", type=int, default=1)
    args = parser.parse_args()
    try:  # the faster loop keeps the server further ahead of the clients it measures
        import uvloop
    except ImportError:
        asyncio.run(serve(args.port, args.step_ms, args.tokens_per_chunk))
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(serve(args.port, args.step_ms, args.tokens_per_chunk))


if __name__ == "__main__":
    main()
