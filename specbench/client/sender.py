"""Streaming OpenAI-compatible requests over aiohttp: the measurement hot path.

Per chunk the client does O(1) work: one `orjson.loads`, a few dict lookups and two list
appends. Nothing is re-serialised and nothing is written to disk until the request ends.
Measured requests never retry: an error becomes part of the record, never an exception,
except `asyncio.CancelledError`, which always propagates.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import aiohttp
import orjson

from specbench.client.control import auth_headers
from specbench.client.record import RequestRecord
from specbench.client.sse import SSEDecoder
from specbench.common.defaults import REQUEST_TIMEOUT_S

Api = Literal["chat", "completions"]
Client = Literal["aiohttp", "openai"]
Prompt = list[dict[str, str]] | str


@dataclass(frozen=True, slots=True)
class RequestSettings:
    """What every request of a cell sends besides its prompt."""

    model: str
    api: Api = "chat"
    max_tokens: int = 256
    temperature: float = 0.0
    ignore_eos: bool = False
    return_token_ids: bool = True
    extra_body: dict[str, Any] = field(default_factory=dict)

    def body(self, prompt: Prompt) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stream": True,
            # Cumulative completion_tokens on every chunk: exact token counts per chunk.
            "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        }
        if self.api == "chat":
            body["messages"] = prompt
        else:
            body["prompt"] = prompt
        if self.ignore_eos:
            body["ignore_eos"] = True
        if self.return_token_ids:
            body["return_token_ids"] = True
        body.update(self.extra_body)
        return body


class Sender(Protocol):
    """Sends one request and fills its record (timings, tokens, outputs, or the error)."""

    async def send(self, prompt: Prompt, record: RequestRecord) -> None: ...


class AiohttpSender:
    """The default client: one aiohttp session, streamed SSE parsed incrementally."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        base_url: str,
        settings: RequestSettings,
        *,
        api_key: str | None = None,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self._session = session
        self._settings = settings
        path = "/v1/chat/completions" if settings.api == "chat" else "/v1/completions"
        self._url = base_url + path
        self._headers = {"Content-Type": "application/json", **auth_headers(api_key)}
        self._request_timeout_s = request_timeout_s
        # No sock_read: aiohttp re-arms that timer on every socket read, which costs more
        # CPU per chunk than anything else the client does; _IdleWatchdog does the same job.
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)

    async def send(self, prompt: Prompt, record: RequestRecord) -> None:
        payload = orjson.dumps(self._settings.body(prompt))
        watchdog = _IdleWatchdog(self._request_timeout_s)
        try:
            send_ns = watchdog.arm()
            async with self._session.post(
                self._url, data=payload, headers=self._headers, timeout=self._timeout
            ) as response:
                if response.status != 200:
                    text = await response.text(errors="replace")
                    record.error_type = f"http_{response.status}"
                    record.error_message = _error_text(text)
                    return
                await _consume_stream(
                    response, send_ns, record, self._settings.api == "chat", watchdog
                )
        except asyncio.CancelledError:
            if not watchdog.fired:
                raise
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
            record.error_type = "timeout"
            record.error_message = f"no data for {self._request_timeout_s:g} s"
        except TimeoutError:
            record.error_type = "timeout"
            record.error_message = "no connection within 30 s"
        except aiohttp.ClientError as error:
            record.error_type = type(error).__name__
            record.error_message = str(error)[:500]
        finally:
            watchdog.disarm()


class _IdleWatchdog:
    """Cancels the request's task after `timeout_s` without data (response or chunks).

    One timer per timeout period, re-armed lazily from the last arrival, instead of one
    timer per socket read. `fired` tells its cancellation from any other.
    """

    __slots__ = ("_handle", "_task", "_timeout_ns", "fired", "last_ns")

    def __init__(self, timeout_s: float) -> None:
        self._timeout_ns = int(timeout_s * 1e9)
        self._handle: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[object] | None = None
        self.fired = False
        self.last_ns = 0

    def arm(self) -> int:
        """Start watching the current task; returns the start instant (perf ns)."""
        self._task = asyncio.current_task()
        self.last_ns = time.perf_counter_ns()
        self._handle = asyncio.get_running_loop().call_later(self._timeout_ns / 1e9, self._check)
        return self.last_ns

    def _check(self) -> None:
        idle_ns = time.perf_counter_ns() - self.last_ns
        if idle_ns >= self._timeout_ns:
            self.fired = True
            if self._task is not None:
                self._task.cancel()
            return
        self._handle = asyncio.get_running_loop().call_later(
            (self._timeout_ns - idle_ns) / 1e9, self._check
        )

    def disarm(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


async def _consume_stream(
    response: aiohttp.ClientResponse,
    send_ns: int,
    record: RequestRecord,
    chat: bool,
    watchdog: _IdleWatchdog,
) -> None:
    decoder = SSEDecoder()
    offsets = record.chunk_offsets_ns
    counts = record.chunk_tokens
    text_parts: list[str] = []
    token_ids: list[int] = []
    seen_usage = False
    completion_tokens = 0
    done = False
    loads = orjson.loads
    perf_counter_ns = time.perf_counter_ns
    async for data in response.content.iter_any():
        now = perf_counter_ns()
        watchdog.last_ns = now
        arrived = now - send_ns
        for event in decoder.feed(data):
            if event == b"[DONE]":
                done = True
                continue
            try:
                chunk = loads(event)
            except orjson.JSONDecodeError:
                record.error_type = "bad_chunk"
                record.error_message = event[:200].decode(errors="replace")
                return
            if "error" in chunk:
                error = chunk["error"]
                record.error_type = "server_error"
                record.error_message = _error_text(orjson.dumps(error).decode())
                return
            new_tokens = 0
            choices = chunk.get("choices")
            if choices:
                choice = choices[0]
                content = (choice.get("delta") or {}).get("content") if chat else choice.get("text")
                if content:
                    text_parts.append(content)
                ids = choice.get("token_ids")
                if ids:
                    token_ids.extend(ids)
                reason = choice.get("finish_reason")
                if reason:
                    record.finish_reason = reason
                    record.stop_reason = choice.get("stop_reason")
                if not seen_usage:
                    new_tokens = len(ids) if ids else (1 if content else 0)
            usage = chunk.get("usage")
            if usage:
                seen_usage = True
                total = usage.get("completion_tokens") or 0
                new_tokens = total - completion_tokens
                completion_tokens = total
                record.input_tokens = usage.get("prompt_tokens")
            elif new_tokens:
                completion_tokens += new_tokens
            if new_tokens > 0 and choices:
                offsets.append(arrived)
                counts.append(new_tokens)
            metrics = chunk.get("metrics")
            if metrics:
                record.spec_decode = metrics.get("speculative_decoding")
    if not done:
        record.error_type = "incomplete_stream"
        record.error_message = "the stream ended without [DONE]"
        return
    if not offsets:
        record.error_type = "no_tokens"
        record.error_message = "the stream carried no token"
        return
    if not seen_usage:
        record.token_count_source = "token_ids" if token_ids else "chunks"
    record.ttft_ns = offsets[0]
    record.e2e_ns = offsets[-1]
    record.output_tokens = completion_tokens
    record.output_text = "".join(text_parts)
    record.output_token_ids = token_ids or None


def _error_text(text: str) -> str:
    """The server's own error message, on one line, capped."""
    try:
        body = orjson.loads(text)
        if isinstance(body, dict):
            inner = body.get("error", body)
            if isinstance(inner, dict) and "message" in inner:
                text = str(inner["message"])
            elif "message" in body:
                text = str(body["message"])
    except orjson.JSONDecodeError:
        pass
    return " ".join(text.split())[:500]
