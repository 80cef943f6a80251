"""One stream accumulator: the per-chunk bookkeeping both senders share.

The aiohttp sender feeds it decoded JSON chunks; the openai sender feeds it the SDK's
chunks as plain dicts. Either way the same rules fill the record:

- tokens per chunk come from cumulative `usage.completion_tokens` when the server sends
  usage on every chunk (`continuous_usage_stats`), else from `len(token_ids)`, else 1 per
  chunk with content (an estimate, recorded as `token_count_source = "chunks"`);
- a usage-only final chunk (`include_usage` without continuous stats) fixes the total
  (`output_tokens`) but adds no chunk arrival;
- the final usage chunk's `metrics` gives `spec_decode` (`speculative_decoding`) and
  `server_timing` (vLLM's per-request timing fields, when the server was started with
  `--enable-per-request-metrics`);
- a stream that ends unfinished is `incomplete_stream`, one with no token `no_tokens`;
- thinking (chat only): text in `delta.reasoning` (vLLM 0.32 with a reasoning parser) or
  `delta.reasoning_content` (older vLLMs, other servers) is kept apart in `reasoning_text`;
  without it, a `</think>` in the content (with or without an opening `<think>`: some chat
  templates put the opening tag in the prompt) marks an inline span. The answer starts at
  the first token-carrying chunk all of whose tokens follow the span: with a field, the
  first chunk with content and no reasoning; inline, the first chunk with content after
  the chunk that held `</think>`. A span never closed makes the whole output thinking; no
  span at all leaves `answer_start_token` None (never guessed).
"""

from __future__ import annotations

from typing import Any

from specbench.client.record import RequestRecord

REASONING_FIELDS = ("reasoning", "reasoning_content")
#: vLLM 0.32's per-request timing fields (`--enable-per-request-metrics`), on the final
#: usage chunk's `metrics` beside `speculative_decoding`.
SERVER_TIMING_FIELDS = (
    "queue_time_ms",
    "time_to_first_token_ms",
    "generation_time_ms",
    "mean_itl_ms",
    "tokens_per_second",
)
THINK_START = "<think>"
THINK_END = "</think>"
# Enough trailing content to find a tag split across chunks.
_TAIL_CHARS = len(THINK_END) - 1


class StreamAccumulator:
    """Fills one `RequestRecord` from the chunks of one streamed response."""

    __slots__ = (
        "_answer_start",
        "_chat",
        "_completion_tokens",
        "_continuous_usage",
        "_counts",
        "_offsets",
        "_reasoning_parts",
        "_reasoning_source",
        "_record",
        "_tail",
        "_text_parts",
        "_think_closed",
        "_think_opened",
        "_token_ids",
    )

    def __init__(self, record: RequestRecord, *, chat: bool) -> None:
        self._record = record
        self._chat = chat
        self._offsets = record.chunk_offsets_ns
        self._counts = record.chunk_tokens
        self._text_parts: list[str] = []
        self._token_ids: list[int] = []
        self._completion_tokens = 0
        self._continuous_usage = False
        self._reasoning_parts: list[str] = []
        self._reasoning_source: str | None = None
        self._think_opened = False
        self._think_closed = False
        self._tail = ""
        self._answer_start: int | None = None

    def add(self, chunk: dict[str, Any], arrived_ns: int) -> bool:
        """Account one chunk that arrived `arrived_ns` after send; False on a server error."""
        record = self._record
        if "error" in chunk:
            error = chunk["error"]
            record.error_type = "server_error"
            message = error.get("message") if isinstance(error, dict) else None
            record.error_message = " ".join(str(message or error).split())[:500]
            return False
        new_tokens = 0
        choices = chunk.get("choices")
        usage = chunk.get("usage")
        is_answer = False
        reasoning = None
        if choices:
            choice = choices[0]
            if self._chat:
                delta = choice.get("delta") or {}
                content = delta.get("content")
                reasoning = self._reasoning(delta)
                is_answer = bool(content) and self._is_answer(str(content), reasoning)
            else:
                content = choice.get("text")
            if content:
                self._text_parts.append(content)
            ids = choice.get("token_ids")
            if ids:
                self._token_ids.extend(ids)
            reason = choice.get("finish_reason")
            if reason:
                record.finish_reason = reason
                # vLLM's stop_reason: the stop string or token id that ended the turn.
                record.stop_reason = choice.get("stop_reason")
            if usage:
                self._continuous_usage = True
            if not self._continuous_usage:
                new_tokens = len(ids) if ids else (1 if content or reasoning else 0)
        if usage:
            total = usage.get("completion_tokens") or 0
            if self._continuous_usage:
                new_tokens = total - self._completion_tokens
            self._completion_tokens = total
            record.input_tokens = usage.get("prompt_tokens")
        elif new_tokens:
            self._completion_tokens += new_tokens
        if new_tokens > 0 and choices:
            if is_answer and self._answer_start is None:
                self._answer_start = self._completion_tokens - new_tokens
            self._offsets.append(arrived_ns)
            self._counts.append(new_tokens)
        metrics = chunk.get("metrics")
        if metrics:
            record.spec_decode = metrics.get("speculative_decoding")
            timing = {
                name: metrics[name]
                for name in SERVER_TIMING_FIELDS
                if metrics.get(name) is not None
            }
            record.server_timing = timing or None
        return True

    def _reasoning(self, delta: dict[str, Any]) -> str | None:
        """The thinking text of a delta's reasoning field, kept apart; None without one."""
        for name in REASONING_FIELDS:
            text = delta.get(name)
            if text is not None:
                if self._reasoning_source is None:
                    self._reasoning_source = name
                if text:
                    self._reasoning_parts.append(text)
                return text
        return None

    def _is_answer(self, content: str, reasoning: str | None) -> bool:
        """Whether a chunk with `content` lies wholly after the thinking span."""
        if self._reasoning_source is not None:
            return reasoning is None
        # Inline tags: only a chunk after the one that closed the span is all answer.
        if self._think_closed:
            return True  # nothing left to find: no search on the rest of the answer
        seen = self._tail + content
        if not self._think_opened and THINK_START in seen:
            self._think_opened = True
        if THINK_END in seen:
            self._think_closed = True
        self._tail = seen[-_TAIL_CHARS:]
        return False

    def finish(self, *, complete: bool, unfinished: str) -> None:
        """Close the record: timings and outputs, or why the stream is not a result.

        `complete` says whether the stream ended properly (`[DONE]` seen, or for a client
        that hides `[DONE]`, a finish_reason); `unfinished` names what was missing.
        """
        record = self._record
        if not complete:
            record.error_type = "incomplete_stream"
            record.error_message = f"the stream ended without {unfinished}"
            return
        if not self._offsets:
            record.error_type = "no_tokens"
            record.error_message = "the stream carried no token"
            return
        if not self._continuous_usage:
            record.token_count_source = "token_ids" if self._token_ids else "chunks"
        record.ttft_ns = self._offsets[0]
        record.e2e_ns = self._offsets[-1]
        record.output_tokens = self._completion_tokens
        record.output_text = "".join(self._text_parts)
        record.output_token_ids = self._token_ids or None
        if self._reasoning_source is not None:
            record.reasoning_source = self._reasoning_source
            record.reasoning_text = "".join(self._reasoning_parts)
        elif self._think_opened or self._think_closed:
            record.reasoning_source = "think_tags"
        if record.reasoning_source is not None:
            # A span that never closed (cut by max_tokens) is all thinking.
            answer_start = self._answer_start
            record.answer_start_token = (
                answer_start if answer_start is not None else self._completion_tokens
            )
