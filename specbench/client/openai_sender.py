"""The same requests through the official `openai` SDK's async streaming client.

`--client openai` exists so users can confirm that figures do not depend on the client;
the default hot path stays on aiohttp (lower overhead, first-byte timing).
"""

from __future__ import annotations

import time
from typing import Any

from specbench.client.record import RequestRecord
from specbench.client.sender import Prompt, RequestSettings
from specbench.client.stream import StreamAccumulator


class OpenAISender:
    """Streams one request with `openai.AsyncOpenAI` and fills its record like AiohttpSender."""

    def __init__(
        self,
        base_url: str,
        settings: RequestSettings,
        *,
        api_key: str | None,
        request_timeout_s: float,
        max_connections: int,
    ) -> None:
        import openai
        from openai._constants import DEFAULT_CONNECTION_LIMITS

        self._settings = settings
        # openai 1.x builds on httpx, 3.x on httpx2: take the Limits class the SDK itself uses.
        limits = type(DEFAULT_CONNECTION_LIMITS)(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        self._client = openai.AsyncOpenAI(
            base_url=f"{base_url}/v1",
            api_key=api_key or "EMPTY",
            timeout=request_timeout_s,
            max_retries=0,  # measured requests never retry
            http_client=openai.DefaultAsyncHttpxClient(limits=limits, timeout=request_timeout_s),
        )
        self._openai = openai

    async def close(self) -> None:
        await self._client.close()

    async def send(self, prompt: Prompt, record: RequestRecord) -> None:
        body = self._settings.body(prompt)
        standard = {
            key: body.pop(key)
            for key in ("model", "max_tokens", "temperature", "stream", "stream_options")
        }
        chat = self._settings.api == "chat"
        accumulator = StreamAccumulator(record, chat=chat)
        try:
            send_ns = time.perf_counter_ns()
            if chat:
                stream: Any = await self._client.chat.completions.create(
                    messages=body.pop("messages"), extra_body=body, **standard
                )
            else:
                stream = await self._client.completions.create(
                    prompt=body.pop("prompt"), extra_body=body, **standard
                )
            async for chunk in stream:
                arrived = time.perf_counter_ns() - send_ns
                # model_dump keeps vLLM's extra fields (token_ids, metrics) as plain dicts.
                if not accumulator.add(chunk.model_dump(exclude_none=True), arrived):
                    return
        except self._openai.APIStatusError as error:
            record.error_type = f"http_{error.status_code}"
            record.error_message = " ".join(str(error.message).split())[:500]
            return
        except (self._openai.APIConnectionError, self._openai.APITimeoutError) as error:
            record.error_type = type(error).__name__
            record.error_message = str(error)[:500]
            return
        except self._openai.APIError as error:  # an `error` event inside the stream
            record.error_type = "server_error"
            record.error_message = " ".join(str(error.message).split())[:500]
            return
        # The SDK swallows `[DONE]`: a finish_reason is the sign the stream ended properly.
        accumulator.finish(complete=record.finish_reason is not None, unfinished="a finish_reason")
