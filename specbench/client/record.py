"""The per-request record: one line of `requests.jsonl`, written as each request finishes.

One record is one HTTP request, i.e. one turn of a conversation. Times are integer
nanoseconds from `time.perf_counter_ns()`: `start_ns` relative to the cell's window start,
chunk arrivals relative to the request's own send instant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass(slots=True)
class RequestRecord:
    """What one request did, as measured by the client and reported by the server."""

    question_id: str
    turn: int
    num_turns: int
    category: str
    start_ns: int = 0
    #: Send → the request's end (last byte, error or timeout); None for a turn never sent.
    duration_ns: int | None = None
    ttft_ns: int | None = None
    e2e_ns: int | None = None
    #: Arrival of each chunk that carried tokens, ns after send.
    chunk_offsets_ns: list[int] = field(default_factory=list)
    #: Tokens each of those chunks carried (server usage deltas when exact).
    chunk_tokens: list[int] = field(default_factory=list)
    #: "usage" (continuous usage stats), "token_ids", or "chunks" (1 per content chunk: estimate).
    token_count_source: str = "usage"
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    #: vLLM's `stop_reason`: None with finish_reason "stop" means the EOS token ended the turn.
    stop_reason: int | str | None = None
    error_type: str | None = None
    error_message: str | None = None
    #: vLLM's per-request `metrics.speculative_decoding` object, verbatim, when sent.
    spec_decode: dict[str, Any] | None = None
    #: The server's own timing of the request (vLLM's `--enable-per-request-metrics`:
    #: `queue_time_ms`, `time_to_first_token_ms`, `generation_time_ms`, `mean_itl_ms`,
    #: `tokens_per_second`, those it sent), verbatim; None when it sent none. Records
    #: written before this field lack it and read back as None.
    server_timing: dict[str, float] | None = None
    output_token_ids: list[int] | None = None
    output_text: str | None = None
    #: Thinking text the server sent apart from the content (`delta.reasoning` or
    #: `delta.reasoning_content`), joined; None when it sent none.
    reasoning_text: str | None = None
    #: Where the thinking span was found: "reasoning", "reasoning_content" (delta field)
    #: or "think_tags" (`<think>…</think>` inline in the content); None = no span found.
    reasoning_source: str | None = None
    #: Output tokens before the first chunk whose tokens all follow `</think>` (the
    #: thinking/answer boundary for `metrics.cuts.acceptance_length_by_span`); None when
    #: no thinking span was found, never guessed.
    answer_start_token: int | None = None

    @property
    def ok(self) -> bool:
        return self.error_type is None

    @property
    def thinking_tokens(self) -> int | None:
        """Output tokens of the thinking span (markers included); None without a span."""
        return self.answer_start_token

    @property
    def answer_tokens(self) -> int | None:
        """Output tokens after the thinking span; None without a span."""
        if self.answer_start_token is None or self.output_tokens is None:
            return None
        return self.output_tokens - self.answer_start_token

    @property
    def decode_ms(self) -> tuple[float, str] | None:
        """The decode phase (first token to last) in ms and who timed it: "server" (its
        `generation_time_ms`) or "client" (E2E − TTFT); None when neither has one above 0.

        The server's clock is preferred: a client that falls behind reads a whole answer in
        one socket read, and its E2E − TTFT is then 0 however long the decode took.
        """
        server = (self.server_timing or {}).get("generation_time_ms")
        if server is not None and server > 0:
            return float(server), "server"
        if self.ttft_ns is not None and self.e2e_ns is not None and self.e2e_ns > self.ttft_ns:
            return (self.e2e_ns - self.ttft_ns) / 1e6, "client"
        return None

    @property
    def ttft_ms(self) -> float | None:
        return None if self.ttft_ns is None else self.ttft_ns / 1e6

    @property
    def e2e_ms(self) -> float | None:
        return None if self.e2e_ns is None else self.e2e_ns / 1e6

    def to_json_line(self) -> bytes:
        # orjson serialises the dataclass natively, like asdict() but ~40× faster: asdict
        # deep-copies every list, and this runs once per request on the event loop.
        return orjson.dumps(self) + b"\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RequestRecord:
        return cls(**data)
