"""Response bodies in vLLM 0.32's OpenAI-compatible shapes.

Shapes follow vLLM's pydantic models as it serializes them: stream chunks with
`exclude_unset=True` (fields vLLM sets explicitly appear even when null), the trailing
usage chunk with `exclude_none=True`, non-streaming bodies with every field. Bodies are
plain dicts serialized by orjson (no pydantic per chunk), keys in vLLM's field order.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from specbench.emulator.protocol import ParsedRequest
from specbench.emulator.reasoning import message_parts, reasoning_token_count, reports_reasoning
from specbench.emulator.tokens import token_text


def new_request_id(chat: bool) -> str:
    """An id in vLLM's style: `chatcmpl-` or `cmpl-` and 16 hex digits."""
    return ("chatcmpl-" if chat else "cmpl-") + secrets.token_hex(8)


def created_now() -> int:
    """The `created` field: whole Unix seconds."""
    return int(time.time())


def text_of(token_ids: list[int]) -> str:
    """Detokenized text of a run of fake tokens."""
    return "".join(token_text(token_id) for token_id in token_ids)


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    """`UsageInfo` as vLLM orders it (prompt, total, completion)."""
    return {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
    }


def chat_stream_usage(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    """Continuous usage on a chat chunk: vLLM sets `completion_tokens_details` (to null)."""
    return {**usage(prompt_tokens, completion_tokens), "completion_tokens_details": None}


_TIMING_FIELDS = (
    "time_to_first_token_ms",
    "generation_time_ms",
    "queue_time_ms",
    "mean_itl_ms",
    "tokens_per_second",
)


def per_request_metrics_full(
    spec: dict[str, Any] | None, timing: dict[str, float] | None = None
) -> dict[str, Any] | None:
    """`PerRequestMetrics` as a non-streaming body dumps it (every field); None when the
    server was asked for neither timing nor acceptance."""
    if spec is None and timing is None:
        return None
    metrics: dict[str, Any] = {name: (timing or {}).get(name) for name in _TIMING_FIELDS}
    metrics["speculative_decoding"] = (
        {
            **spec,
            "per_step_accepted": spec.get("per_step_accepted"),
            "per_step_drafted": spec.get("per_step_drafted"),
        }
        if spec is not None
        else None
    )
    return metrics


def stream_metrics(
    timing: dict[str, float] | None, spec: dict[str, Any] | None
) -> dict[str, Any] | None:
    """`PerRequestMetrics` on the final usage chunk (`exclude_none`): the timing fields the
    server has, then `speculative_decoding`; None when it has neither."""
    metrics: dict[str, Any] = {
        name: value for name in _TIMING_FIELDS if (value := (timing or {}).get(name)) is not None
    }
    if spec is not None:
        metrics["speculative_decoding"] = spec
    return metrics or None


@dataclass(frozen=True, slots=True)
class FinishedRequest:
    """What a non-streaming response reports of one finished request."""

    request_id: str
    created: int
    model: str
    parsed: ParsedRequest
    token_ids: list[int]
    finish_reason: str
    fingerprint: str
    spec: dict[str, Any] | None
    timing: dict[str, float] | None = None


def chat_response(
    done: FinishedRequest, reasoning_tokens: int = 0, reasoning_output: str = "reasoning"
) -> dict[str, Any]:
    """A non-streaming `ChatCompletionResponse`; thinking split off per `emulator.reasoning`."""
    content, reasoning = message_parts(done.token_ids, reasoning_tokens, reasoning_output)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
        "reasoning": None,
    }
    if reasoning is not None:
        message.pop("reasoning")
        message[reasoning_output] = reasoning
    completion_details = (
        {"reasoning_tokens": reasoning_token_count(len(done.token_ids), reasoning_tokens)}
        if reports_reasoning(reasoning_tokens, reasoning_output)
        else None
    )
    return {
        "id": done.request_id,
        "object": "chat.completion",
        "created": done.created,
        "model": done.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": done.finish_reason,
                "stop_reason": None,
                "token_ids": done.token_ids if done.parsed.return_token_ids else None,
                "routed_experts": None,
            }
        ],
        "service_tier": None,
        "system_fingerprint": done.fingerprint,
        "usage": {
            **usage(done.parsed.num_prompt_tokens, len(done.token_ids)),
            "prompt_tokens_details": None,
            "completion_tokens_details": completion_details,
        },
        "prompt_logprobs": None,
        "prompt_token_ids": done.parsed.prompt_token_ids if done.parsed.return_token_ids else None,
        "prompt_text": None,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": per_request_metrics_full(done.spec, done.timing),
    }


def completion_response(done: FinishedRequest) -> dict[str, Any]:
    """A non-streaming `CompletionResponse`."""
    return_ids = done.parsed.return_token_ids
    return {
        "id": done.request_id,
        "object": "text_completion",
        "created": done.created,
        "model": done.model,
        "choices": [
            {
                "index": 0,
                "text": text_of(done.token_ids),
                "logprobs": None,
                "finish_reason": done.finish_reason,
                "stop_reason": None,
                "token_ids": done.token_ids if return_ids else None,
                "prompt_logprobs": None,
                "prompt_token_ids": done.parsed.prompt_token_ids if return_ids else None,
                "routed_experts": None,
            }
        ],
        "service_tier": None,
        "system_fingerprint": done.fingerprint,
        "usage": {
            **usage(done.parsed.num_prompt_tokens, len(done.token_ids)),
            "prompt_tokens_details": None,
            "completion_tokens_details": None,
        },
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": per_request_metrics_full(done.spec, done.timing),
    }
