"""Server-sent-event bytes of one streamed request, chunk by chunk, as vLLM 0.32 writes them.

Chat: a role chunk (`delta: {role, content: ""}`) goes out with the first token, then
one chunk per engine step, the last carrying `finish_reason`; with
`stream_options.include_usage` a final chunk with `choices: []`, the usage and `metrics`
(the timing fields with `--enable-per-request-metrics`, `speculative_decoding` when
speculating); then `data: [DONE]`. Completions have no
role chunk and carry `prompt_token_ids` in the first choice. With
`continuous_usage_stats` every chunk carries cumulative usage. In reasoning mode the chat
deltas and usage details follow `emulator.reasoning` (a lone marker token may send no chunk).
"""

from __future__ import annotations

from typing import Any

import orjson

from specbench.emulator.protocol import ParsedRequest
from specbench.emulator.reasoning import chat_delta, reasoning_token_count, reports_reasoning
from specbench.emulator.request import StepOutput
from specbench.emulator.responses import chat_stream_usage, stream_metrics, text_of, usage

DONE = b"data: [DONE]\n\n"


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


class StreamEncoder:
    """Turns a request's step outputs into SSE bytes; holds the per-request constants."""

    __slots__ = (
        "_completion_tokens",
        "_fingerprint",
        "_first",
        "_head",
        "_parsed",
        "_reasoning_output",
        "_reasoning_tokens",
        "_usage_details",
    )

    def __init__(
        self,
        parsed: ParsedRequest,
        request_id: str,
        created: int,
        model: str,
        fingerprint: str,
        reasoning_tokens: int = 0,
        reasoning_output: str = "reasoning",
    ) -> None:
        self._parsed = parsed
        self._reasoning_tokens = reasoning_tokens
        self._reasoning_output = reasoning_output
        self._usage_details = reports_reasoning(reasoning_tokens, reasoning_output)
        self._fingerprint = fingerprint
        self._head: dict[str, Any] = {
            "id": request_id,
            "object": "chat.completion.chunk" if parsed.chat else "text_completion",
            "created": created,
            "model": model,
        }
        self._completion_tokens = 0
        self._first = True

    def encode(self, output: StepOutput) -> bytes:
        """The bytes to write for one step output (several events on the first and last)."""
        parsed = self._parsed
        parts: list[bytes] = []
        if self._first and parsed.chat:
            parts.append(self._chat_role_chunk())
        start = self._completion_tokens
        self._completion_tokens += len(output.token_ids)
        parts.append(
            self._chat_chunk(output, start) if parsed.chat else self._completion_chunk(output)
        )
        self._first = False
        if output.finish_reason is not None:
            if parsed.include_usage:
                parts.append(self._final_usage_chunk(output))
            parts.append(DONE)
        return b"".join(parts)

    def _chat_role_chunk(self) -> bytes:
        parsed = self._parsed
        chunk: dict[str, Any] = {
            **self._head,
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": ""},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
        }
        if parsed.continuous_usage:
            chunk["usage"] = self._chat_usage(0)
        chunk["prompt_token_ids"] = parsed.prompt_token_ids if parsed.return_token_ids else None
        chunk["prompt_text"] = None
        return _event(chunk)

    def _chat_usage(self, completion_tokens: int) -> dict[str, Any]:
        usage_info = chat_stream_usage(self._parsed.num_prompt_tokens, completion_tokens)
        if self._usage_details:
            usage_info["completion_tokens_details"] = {
                "reasoning_tokens": reasoning_token_count(completion_tokens, self._reasoning_tokens)
            }
        return usage_info

    def _chat_chunk(self, output: StepOutput, start: int) -> bytes:
        parsed = self._parsed
        delta = chat_delta(output.token_ids, start, self._reasoning_tokens, self._reasoning_output)
        if delta is None:
            if output.finish_reason is None and not parsed.return_token_ids:
                return b""
            delta = {}
        choice: dict[str, Any] = {
            "index": 0,
            "delta": delta,
            "logprobs": None,
            "finish_reason": output.finish_reason,
        }
        if output.finish_reason is not None:
            choice["stop_reason"] = None
        choice["token_ids"] = output.token_ids if parsed.return_token_ids else None
        chunk: dict[str, Any] = {**self._head, "choices": [choice]}
        if parsed.continuous_usage:
            chunk["usage"] = self._chat_usage(self._completion_tokens)
        if output.finish_reason is not None and not parsed.include_usage:
            chunk["system_fingerprint"] = self._fingerprint
        return _event(chunk)

    def _completion_chunk(self, output: StepOutput) -> bytes:
        parsed = self._parsed
        prompt_ids = parsed.prompt_token_ids if parsed.return_token_ids and self._first else None
        choice = {
            "index": 0,
            "text": text_of(output.token_ids),
            "logprobs": None,
            "finish_reason": output.finish_reason,
            "stop_reason": None,
            "prompt_token_ids": prompt_ids,
            "token_ids": output.token_ids if parsed.return_token_ids else None,
        }
        chunk: dict[str, Any] = {**self._head, "choices": [choice]}
        if parsed.continuous_usage:
            chunk["usage"] = usage(parsed.num_prompt_tokens, self._completion_tokens)
        if output.finish_reason is not None and not parsed.include_usage:
            chunk["system_fingerprint"] = self._fingerprint
        return _event(chunk)

    def _final_usage_chunk(self, output: StepOutput) -> bytes:
        final_usage: dict[str, Any] = usage(self._parsed.num_prompt_tokens, self._completion_tokens)
        if self._usage_details and self._parsed.chat:
            final_usage["completion_tokens_details"] = {
                "reasoning_tokens": reasoning_token_count(
                    self._completion_tokens, self._reasoning_tokens
                )
            }
        chunk: dict[str, Any] = {
            **self._head,
            "choices": [],
            "usage": final_usage,
            "system_fingerprint": self._fingerprint,
        }
        metrics = stream_metrics(output.timing_metrics, output.spec_decode_metrics)
        if metrics is not None:
            chunk["metrics"] = metrics
        return _event(chunk)
