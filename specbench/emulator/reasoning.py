"""Reasoning output as vLLM 0.32 streams it with a `<think>…</think>` reasoning parser.

The thinking span is output positions [0, N) (`--reasoning-tokens N`, markers at 0 and
N-1, see `tokens`). With a field (`reasoning` in vLLM 0.32, `reasoning_content` in older
vLLMs and other servers), each chunk's delta follows vLLM's basic think parser:
- a chunk that is a lone marker token has no delta: vLLM sends no chunk for it, unless
  the request asked for `return_token_ids` or it finishes (then `delta: {}`);
- a chunk before `</think>`: `{field: thinking text}` (markers carry no text);
- the chunk holding `</think>`: `{"content": answer text or null, field: thinking text}`
  (both keys set, in DeltaMessage's field order);
- chunks after it: `{"content": answer text}`.
`inline` sends everything as content, the markers as `<think>` and `</think>` text.
Usage then carries `completion_tokens_details.reasoning_tokens`: vLLM's count of tokens
strictly between the markers, so N - 2 once the span is complete.
"""

from __future__ import annotations

from typing import Any

from specbench.emulator.tokens import THINK_END_TOKEN_ID, THINK_START_TOKEN_ID, token_text

_MARKERS = (THINK_START_TOKEN_ID, THINK_END_TOKEN_ID)


def _text(token_ids: list[int]) -> str:
    return "".join(token_text(token_id) for token_id in token_ids if token_id not in _MARKERS)


def chat_delta(
    token_ids: list[int], start: int, reasoning_tokens: int, reasoning_output: str
) -> dict[str, Any] | None:
    """The delta of a chunk of `token_ids` starting at output position `start`; None = none."""
    if reasoning_tokens <= 0 or reasoning_output == "inline":
        return {"content": "".join(token_text(token_id) for token_id in token_ids)}
    if len(token_ids) == 1 and token_ids[0] in _MARKERS:
        return None
    end_marker = reasoning_tokens - 1
    if start > end_marker:
        return {"content": _text(token_ids)}
    if start + len(token_ids) <= end_marker:
        return {reasoning_output: _text(token_ids)}
    split = end_marker - start + 1
    answer = _text(token_ids[split:])
    return {"content": answer or None, reasoning_output: _text(token_ids[:split])}


def message_parts(
    token_ids: list[int], reasoning_tokens: int, reasoning_output: str
) -> tuple[str, str | None]:
    """(content, reasoning) of a whole non-streamed answer; reasoning None without a field."""
    if reasoning_tokens <= 0 or reasoning_output == "inline":
        return "".join(token_text(token_id) for token_id in token_ids), None
    return _text(token_ids[reasoning_tokens:]), _text(token_ids[:reasoning_tokens])


def reasoning_token_count(completion_tokens: int, reasoning_tokens: int) -> int:
    """vLLM's `reasoning_tokens`: generated tokens strictly between the markers."""
    if reasoning_tokens <= 0:
        return 0
    return max(0, min(completion_tokens, reasoning_tokens - 1) - 1)


def reports_reasoning(reasoning_tokens: int, reasoning_output: str) -> bool:
    """Whether the emulated server runs a reasoning parser (usage details, split message)."""
    return reasoning_tokens > 0 and reasoning_output != "inline"
