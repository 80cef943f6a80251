"""One request inside the emulated engine, and what each engine step hands back to it."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

from specbench.emulator.tokens import corrupted_token_id, marker_at, output_token_id


@dataclass(slots=True)
class StepOutput:
    """What one engine step produced for one request."""

    token_ids: list[int]
    finish_reason: str | None
    # vLLM's RequestSpecDecodeMetrics.to_dict() payload, only on the finishing output.
    spec_decode_metrics: dict[str, object] | None = None
    # vLLM's per-request timing fields (`--enable-per-request-metrics`), only on the
    # finishing output.
    timing_metrics: dict[str, float] | None = None


@dataclass(slots=True)
class EngineRequest:
    """One request's state inside the engine."""

    num_prompt_tokens: int
    max_tokens: int
    arrival_s: float
    stream_key: int
    rng: random.Random
    corrupt_from: int | None
    outputs: asyncio.Queue[StepOutput] = field(default_factory=asyncio.Queue)
    num_generated: int = 0
    histogram: list[int] = field(default_factory=list)
    num_draft_tokens: int = 0
    aborted: bool = False
    last_token_s: float = 0.0
    #: Start of the step that prefilled it, and the end of that step (its first token), on
    #: the engine's step clock; 0.0 until then.
    scheduled_s: float = 0.0
    first_token_s: float = 0.0
    #: End of the step that gave its last token so far, on the same clock.
    last_step_end_s: float = 0.0
    #: Thinking span length (markers included); 0 = no reasoning.
    reasoning_tokens: int = 0
    #: Accepted drafts of each verify step, in order (kept for vLLM's `detailed` level).
    per_step_accepted: list[int] = field(default_factory=list)
    #: Drafts of each verify step, in order (the maximum, or a schedule's K for the step).
    per_step_drafted: list[int] = field(default_factory=list)

    def next_token_ids(self, count: int) -> list[int]:
        """The fake model's next `count` tokens, corrupted where configured."""
        start = self.num_generated
        token_ids = [output_token_id(self.stream_key, start + offset) for offset in range(count)]
        if self.corrupt_from is not None:
            for offset in range(count):
                if start + offset >= self.corrupt_from:
                    token_ids[offset] = corrupted_token_id(token_ids[offset])
        if self.reasoning_tokens and start < self.reasoning_tokens:
            for offset in range(count):
                marker = marker_at(start + offset, self.reasoning_tokens)
                if marker is not None:
                    token_ids[offset] = marker
        self.num_generated += count
        return token_ids

    def timing_metrics(self) -> dict[str, float]:
        """vLLM 0.32's per-request timing (`build_per_request_timing_metrics`), keys in its
        order: TTFT from scheduling (queue excluded), generation time first to last token,
        mean ITL over the tokens after the first, tokens/s from scheduling to the last."""
        generation_s = self.last_step_end_s - self.first_token_s
        timing = {
            "time_to_first_token_ms": (self.first_token_s - self.scheduled_s) * 1000,
            "generation_time_ms": generation_s * 1000,
            "queue_time_ms": (self.scheduled_s - self.arrival_s) * 1000,
        }
        if self.num_generated > 1:
            timing["mean_itl_ms"] = generation_s / (self.num_generated - 1) * 1000
        inference_s = self.last_step_end_s - self.scheduled_s
        if inference_s > 0:
            timing["tokens_per_second"] = self.num_generated / inference_s
        return timing

    def spec_decode_metrics(self, num_spec_tokens: int, detailed: bool) -> dict[str, object]:
        """Per-request acceptance, with vLLM 0.32's `SpeculativeDecodingMetrics` fields.

        `detailed` adds `per_step_accepted` and `per_step_drafted` (the K of each verify
        step; a schedule's K = 0 step verifies nothing and is not listed), left out when the
        request had no verify step, as vLLM's `to_dict` does.
        """
        num_spec_steps = sum(self.histogram)
        num_accepted = sum(j * count for j, count in enumerate(self.histogram))
        metrics: dict[str, object] = {
            "mean_acceptance_length": 1.0 + num_accepted / num_spec_steps
            if num_spec_steps
            else 1.0,
            "draft_acceptance_rate": num_accepted / self.num_draft_tokens
            if self.num_draft_tokens
            else 0.0,
            "acceptance_histogram": list(self.histogram),
            "num_spec_steps": num_spec_steps,
            "num_accepted_draft_tokens": num_accepted,
            "num_draft_tokens": self.num_draft_tokens,
            "num_spec_tokens": num_spec_tokens,
        }
        if detailed and self.per_step_accepted:
            metrics["per_step_accepted"] = list(self.per_step_accepted)
            metrics["per_step_drafted"] = list(self.per_step_drafted)
        return metrics
