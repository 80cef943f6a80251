"""One stream accumulator: the per-chunk bookkeeping both senders share.

The aiohttp sender feeds it decoded JSON chunks; the openai sender feeds it the SDK's
chunks as plain dicts. Either way the same rules fill the record:

- tokens per chunk come from cumulative `usage.completion_tokens` when the server sends
  usage on every chunk (`continuous_usage_stats`), else from `len(token_ids)`, else 1 per
  chunk with content (an estimate, recorded as `token_count_source = "chunks"`);
- a usage-only final chunk (`include_usage` without continuous stats) fixes the total
  (`output_tokens`) but adds no chunk arrival;
- a stream that ends unfinished is `incomplete_stream`, one with no token `no_tokens`.
"""

from __future__ import annotations

from typing import Any

from specbench.client.record import RequestRecord


class StreamAccumulator:
    """Fills one `RequestRecord` from the chunks of one streamed response."""

    __slots__ = (
        "_chat",
        "_completion_tokens",
        "_continuous_usage",
        "_counts",
        "_offsets",
        "_record",
        "_text_parts",
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
        if choices:
            choice = choices[0]
            if self._chat:
                content = (choice.get("delta") or {}).get("content")
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
                new_tokens = len(ids) if ids else (1 if content else 0)
        if usage:
            total = usage.get("completion_tokens") or 0
            if self._continuous_usage:
                new_tokens = total - self._completion_tokens
            self._completion_tokens = total
            record.input_tokens = usage.get("prompt_tokens")
        elif new_tokens:
            self._completion_tokens += new_tokens
        if new_tokens > 0 and choices:
            self._offsets.append(arrived_ns)
            self._counts.append(new_tokens)
        metrics = chunk.get("metrics")
        if metrics:
            record.spec_decode = metrics.get("speculative_decoding")
        return True

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
