"""The same requests through the official `openai` SDK's async streaming client.

`--client openai` exists so users can confirm that figures do not depend on the client;
the default hot path stays on aiohttp (lower overhead, first-byte timing).
"""

from __future__ import annotations

import time
from typing import Any

from specbench.client.record import RequestRecord
from specbench.client.sender import Prompt, RequestSettings


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
        text_parts: list[str] = []
        token_ids: list[int] = []
        completion_tokens = 0
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
                new_tokens = 0
                if chunk.choices:
                    choice = chunk.choices[0]
                    content = choice.delta.content if chat else choice.text
                    if content:
                        text_parts.append(content)
                    ids = (choice.model_extra or {}).get("token_ids")
                    if ids:
                        token_ids.extend(ids)
                    if choice.finish_reason:
                        record.finish_reason = choice.finish_reason
                        record.stop_reason = (choice.model_extra or {}).get("stop_reason")
                if chunk.usage:
                    new_tokens = chunk.usage.completion_tokens - completion_tokens
                    completion_tokens = chunk.usage.completion_tokens
                    record.input_tokens = chunk.usage.prompt_tokens
                if new_tokens > 0 and chunk.choices:
                    record.chunk_offsets_ns.append(arrived)
                    record.chunk_tokens.append(new_tokens)
                metrics = (chunk.model_extra or {}).get("metrics")
                if metrics:
                    record.spec_decode = metrics.get("speculative_decoding")
        except self._openai.APIStatusError as error:
            record.error_type = f"http_{error.status_code}"
            record.error_message = " ".join(str(error.message).split())[:500]
            return
        except (self._openai.APIConnectionError, self._openai.APITimeoutError) as error:
            record.error_type = type(error).__name__
            record.error_message = str(error)[:500]
            return
        if not record.chunk_offsets_ns:
            record.error_type = "no_tokens"
            record.error_message = "the stream carried no token"
            return
        record.ttft_ns = record.chunk_offsets_ns[0]
        record.e2e_ns = record.chunk_offsets_ns[-1]
        record.output_tokens = completion_tokens
        record.output_text = "".join(text_parts)
        record.output_token_ids = token_ids or None
