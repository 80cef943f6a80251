"""Request parsing and validation as vLLM 0.32's OpenAI-compatible server does it.

Only the fields the emulator honours are read (model, messages/prompt, max_tokens /
max_completion_tokens, stream, stream_options, return_token_ids, temperature, seed, n);
others (ignore_eos, top_p, ...) are accepted and ignored, as the fake model never stops
early. Refusals carry vLLM's error body and status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from specbench.emulator.tokens import (
    count_prompt_tokens,
    encode,
    prompt_digest_of_ids,
    prompt_digest_of_text,
    render_chat,
)

COMPLETIONS_DEFAULT_MAX_TOKENS = 16  # vLLM's CompletionRequest default
VLLM_DEFAULT_TEMPERATURE = 1.0  # vLLM's default when neither request nor model sets one


class RequestError(Exception):
    """A request vLLM would refuse: becomes its JSON error body with this status."""

    def __init__(
        self,
        message: str,
        status: int = 400,
        err_type: str = "BadRequestError",
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.err_type = err_type
        self.param = param

    def body(self) -> dict[str, Any]:
        """vLLM's `ErrorResponse` body."""
        return {
            "error": {
                "message": self.message,
                "type": self.err_type,
                "param": self.param,
                "code": self.status,
            }
        }


#: A prompt containing `<|emulator_output_tokens=N|>` is answered with at most N tokens
#: (the last such marker counts): lets a synthetic dataset vary output length by category.
OUTPUT_TOKENS_MARKER = re.compile(r"<\|emulator_output_tokens=(\d+)\|>")


@dataclass(slots=True)
class ParsedRequest:
    """What the emulator needs from one chat or completions request."""

    chat: bool
    prompt_digest: int
    num_prompt_tokens: int
    prompt_token_ids: list[int] | None
    max_tokens: int
    stream: bool
    include_usage: bool
    continuous_usage: bool
    return_token_ids: bool
    temperature: float
    seed: int | None
    #: The prompt's tokens as the prefix cache sees them: words of the text, or the ids.
    cache_tokens: list[str] | list[int]


def _field_int(body: dict[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"'{name}' must be an integer", param=name)
    return value


@dataclass(frozen=True, slots=True)
class _Prompt:
    """A request's prompt as the emulator sees it."""

    digest: int
    num_tokens: int
    token_ids: list[int] | None
    cache_tokens: list[str] | list[int]
    #: The text an output-length marker is read from ("" for a prompt of token ids).
    text: str = ""


def _text_prompt(text: str, return_token_ids: bool) -> _Prompt:
    return _Prompt(
        digest=prompt_digest_of_text(text),
        num_tokens=count_prompt_tokens(text),
        token_ids=encode(text) if return_token_ids else None,
        cache_tokens=text.split(),
        text=text,
    )


def _prompt(body: dict[str, Any], chat: bool) -> _Prompt:
    """The chat messages (templated) or the completions prompt (text or token ids)."""
    return_token_ids = bool(body.get("return_token_ids"))
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise RequestError("'messages' must be a non-empty list", param="messages")
        text = render_chat([m if isinstance(m, dict) else {} for m in messages])
        return _text_prompt(text, return_token_ids)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and not isinstance(prompt[0], int):
        prompt = prompt[0]
    if isinstance(prompt, str):
        return _text_prompt(prompt, return_token_ids)
    if (
        isinstance(prompt, list)
        and prompt
        and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt)
    ):
        token_ids = list(prompt)
        return _Prompt(
            digest=prompt_digest_of_ids(prompt),
            num_tokens=len(prompt),
            token_ids=token_ids,
            cache_tokens=token_ids,
        )
    raise RequestError(
        "'prompt' must be a string or a list of token ids (one prompt only)", param="prompt"
    )


def _max_tokens(body: dict[str, Any], chat: bool, prompt: _Prompt, max_model_len: int) -> int:
    """The output cap: the request's (or vLLM's default), the context left, the marker."""
    if prompt.num_tokens >= max_model_len:
        raise RequestError(
            f"This model's maximum context length is {max_model_len} tokens. However, your "
            f"prompt contains {prompt.num_tokens} input tokens, which exceeds this limit even "
            "without any output tokens. Please reduce the length of the input prompt.",
            param="input_tokens",
        )
    requested = _field_int(body, "max_completion_tokens") if chat else None
    if requested is None:
        requested = _field_int(body, "max_tokens")
    if requested is None and not chat:
        requested = COMPLETIONS_DEFAULT_MAX_TOKENS
    if requested is not None and requested < 1:
        raise RequestError(f"max_tokens must be at least 1, got {requested}.", param="max_tokens")
    room = max_model_len - prompt.num_tokens
    max_tokens = room if requested is None else min(requested, room)
    lengths = OUTPUT_TOKENS_MARKER.findall(prompt.text)
    if lengths:  # the prompt's own answer length (test datasets): the last marker wins
        max_tokens = max(1, min(max_tokens, int(lengths[-1])))
    return max_tokens


def parse_request(
    body: object, *, chat: bool, served_model: str, max_model_len: int
) -> ParsedRequest:
    """Validate a request body as vLLM does for the fields the emulator honours."""
    if not isinstance(body, dict):
        raise RequestError("request body must be a JSON object")
    model = body.get("model")
    if model and model != served_model:
        raise RequestError(
            f"The model `{model}` does not exist.",
            status=404,
            err_type="NotFoundError",
            param="model",
        )
    n = _field_int(body, "n")
    if n is not None and n != 1:
        raise RequestError("the emulator serves n=1 only", param="n")
    prompt = _prompt(body, chat)
    max_tokens = _max_tokens(body, chat, prompt, max_model_len)
    stream = bool(body.get("stream", False))
    options = body.get("stream_options")
    include_usage = continuous_usage = False
    if isinstance(options, dict):
        include_usage = bool(options.get("include_usage"))
        continuous_usage = include_usage and bool(options.get("continuous_usage_stats"))
    temperature = body.get("temperature")
    if temperature is None:
        temperature = VLLM_DEFAULT_TEMPERATURE
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or temperature < 0:
        raise RequestError("'temperature' must be a number >= 0", param="temperature")
    return ParsedRequest(
        chat=chat,
        prompt_digest=prompt.digest,
        num_prompt_tokens=prompt.num_tokens,
        prompt_token_ids=prompt.token_ids,
        max_tokens=max_tokens,
        stream=stream,
        include_usage=include_usage,
        continuous_usage=continuous_usage,
        return_token_ids=bool(body.get("return_token_ids", False)),
        temperature=float(temperature),
        seed=_field_int(body, "seed"),
        cache_tokens=prompt.cache_tokens,
    )
