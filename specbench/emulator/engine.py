"""The emulated engine: one asyncio loop batching running requests into timed steps.

Time model (per engine step, as vLLM's scheduler batches work):
- a step lasts `base + per_request_step_ms × (requests in the step − 1)`, where `base` is
  `prefill_ms` when the step admits (prefills) any new request and `step_ms` otherwise;
  so at concurrency 1, TTFT = `prefill_ms` and each decode step = `step_ms` exactly,
  and every further request sharing a step makes it `per_request_step_ms` longer;
- a step that verifies drafts (speculation on, n ≥ 1 decoding requests) also pays
  `draft_step_ms × K + verify_token_ms × max(0, n × (1 + K) − compute_knee_tokens)`: the
  drafter's K passes, and the verified tokens beyond the compute knee (`step_cost_ms`;
  all three 0 by default, so K costs nothing unless a suite prices it);
- a new request's first step is its prefill and yields its first token; later steps
  are decode steps, one chunk per request per step, whatever the tokens it carries;
- steps are scheduled against a monotonic deadline: while the engine is busy the next
  step starts at the previous one's deadline, so sleep overshoot never accumulates; an
  idle engine starts the clock at the earliest arrival among the requests it admits
  (when the handler received it), so HTTP parsing does not add to TTFT.

K per step: `--num-speculative-tokens`, or with `--num-speculative-tokens-per-batch-size`
vLLM's schedule (`common.k_schedule`): the K chosen from a step's request count (prefills
included) is the K every request verifies at the next step, as vLLM's scheduler drafts
after a step for the next. A request's first step is its prefill, so each verify step
follows the step that chose its K. A schedule's K = 0 verifies nothing (no draft counted)
but the step still pays one `draft_step_ms`: the drafter runs.

Acceptance process (speculation on): in each decode step every running request proposes
the step's K drafts; draft i is accepted with conditional probability p_i until the first
rejection, where p depends on the step's start position (the request's tokens so far):
the thinking span's acceptance inside `--reasoning-tokens`, decayed per
`--acceptance-decay-tokens` (see `emulator.acceptance` for the schedule and its truth);
the request emits accepted + 1 (bonus) tokens, capped at what `max_tokens` leaves.
With `--per-request-spec-decode-metrics detailed` each step's accepted count is kept.
With `--enable-per-request-metrics` a finished request reports vLLM's per-request timing
from the step clock (each step's planned start and end): the time model's, exact, even
when the loop runs late and catches up.
Counters follow vLLM: drafts += 1 and draft_tokens += K per request per decode step with
K > 0, accepted += n and per_pos[i] += 1 for i < n (the per-position counter keeps the
maximum's length), counted before the cap (vLLM also counts
acceptance before its stop checks). Draws come from a per-request generator
seeded by (seed, prompt, occurrence of that prompt), so results do not depend on how
concurrent requests happen to interleave.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import deque
from dataclasses import dataclass

from specbench.common.k_schedule import k_for_batch
from specbench.emulator.acceptance import step_acceptance
from specbench.emulator.config import EmulatorConfig
from specbench.emulator.metrics import EmulatorMetrics
from specbench.emulator.request import EngineRequest, StepOutput
from specbench.emulator.tokens import splitmix64


@dataclass(slots=True)
class _PlannedStep:
    duration_s: float
    deliveries: list[tuple[EngineRequest, StepOutput]]
    prompt_tokens: int
    generation_tokens: int
    #: The drafts each decoding request verifies in this step (0: none).
    k: int
    num_drafts: int
    num_draft_tokens: int
    accepted_per_position: list[int]


def step_cost_ms(
    config: EmulatorConfig, admitted: int, decoding: int, k: int, *, drafter_runs: bool = False
) -> float:
    """One engine step's duration (ms) with `admitted` prefills and `decoding` requests
    that each verify `k` drafts (0: no speculation, or no decoding request):

        base + per_request_step_ms · (n − 1) + draft_step_ms · k
             + verify_token_ms · max(0, decoding · (1 + k) − compute_knee_tokens)

    base = prefill_ms when the step admits a request, else step_ms; n = every request in
    the step. The draft and verify terms are the issue's price of K (`emulator.truth`).
    `drafter_runs`: a schedule's K = 0 on a speculative server, which is not the baseline:
    the drafter still runs one forward, so a decoding step pays one `draft_step_ms`."""
    base_ms = config.prefill_ms if admitted else config.step_ms
    duration_ms = base_ms + config.per_request_step_ms * (admitted + decoding - 1)
    if k and decoding:
        verified = decoding * (1 + k)
        duration_ms += config.draft_step_ms * k
        duration_ms += config.verify_token_ms * max(0, verified - config.compute_knee_tokens)
    elif drafter_runs and decoding:
        duration_ms += config.draft_step_ms
    return duration_ms


# The selector's timeout is rounded up to whole milliseconds, so a plain sleep wakes up to
# ~1 ms late; the last stretch before a deadline is spent yielding to the loop instead.
_SPIN_S = 0.0015


async def _sleep_until(loop: asyncio.AbstractEventLoop, deadline: float) -> None:
    """Sleep until `deadline` (loop time), within a fraction of a millisecond."""
    delay = deadline - loop.time() - _SPIN_S
    if delay > 0:
        await asyncio.sleep(delay)
    # Even a late (zero-time or overloaded) step yields once, so handlers and /metrics
    # are never starved by the engine catching up.
    await asyncio.sleep(0)
    # A spin, not an Event: nothing sets it; the deadline is a time, met to ~0.1 ms.
    while loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0)


class Engine:
    """Batches requests into steps on one asyncio task; see the module docstring."""

    def __init__(self, config: EmulatorConfig, metrics: EmulatorMetrics) -> None:
        self.config = config
        self.metrics = metrics
        # Conditional acceptance per (starts in thinking, decay interval): a few entries.
        self._acceptance_cache: dict[tuple[bool, int], tuple[float, ...]] = {}
        self._per_step = config.per_step_spec_metrics
        self._num_spec_tokens = config.num_speculative_tokens if config.speculative else 0
        self._schedule = (
            config.num_speculative_tokens_per_batch_size if config.speculative else None
        )
        # The K drafted after the last step, verified at the next (vLLM's one-step lag). A
        # request's first step is its prefill, which verifies nothing, so this start value
        # is never verified: every verify step follows a step that chose its K.
        self._next_k = self._num_spec_tokens
        self._attach_spec_metrics = config.speculative and config.per_request_spec_metrics
        self._waiting: deque[EngineRequest] = deque()
        self._running: list[EngineRequest] = []
        self._wake = asyncio.Event()
        self._prompt_occurrences: dict[int, int] = {}
        self._task: asyncio.Task[None] | None = None

    def new_request(
        self,
        *,
        arrival_s: float,
        prompt_digest: int,
        num_prompt_tokens: int,
        max_tokens: int,
        corrupt_from: int | None,
        sample: bool,
        sampling_seed: int | None,
    ) -> EngineRequest:
        """Create a request (not yet queued) with its seeded generators.

        `sample` (temperature > 0) salts the output stream with `sampling_seed`, or with a
        draw from the request's generator when the request gave no seed.
        """
        occurrence = self._prompt_occurrences.get(prompt_digest, 0)
        self._prompt_occurrences[prompt_digest] = occurrence + 1
        rng_seed = splitmix64(prompt_digest ^ splitmix64(self.config.seed + (occurrence << 32)))
        rng = random.Random(rng_seed)
        stream_key = prompt_digest
        if sample:
            salt = rng.getrandbits(64) if sampling_seed is None else sampling_seed
            stream_key = splitmix64(prompt_digest ^ splitmix64(salt & ((1 << 64) - 1)))
        return EngineRequest(
            arrival_s=arrival_s,
            num_prompt_tokens=num_prompt_tokens,
            max_tokens=max_tokens,
            stream_key=stream_key,
            rng=rng,
            corrupt_from=corrupt_from,
            histogram=[0] * (self._num_spec_tokens + 1),
            reasoning_tokens=self.config.reasoning_tokens,
        )

    @property
    def busy(self) -> bool:
        """Whether any request is running or waiting (blocks in use, as vLLM sees it)."""
        return bool(self._running or self._waiting)

    def add(self, request: EngineRequest) -> None:
        """Queue a request; it is prefilled in the next step with room for it."""
        self._waiting.append(request)
        self.metrics.num_requests_waiting.set(len(self._waiting))
        self._wake.set()

    def abort(self, request: EngineRequest) -> None:
        """Drop a request whose client went away; it is removed at the next step."""
        if request.aborted:
            return
        request.aborted = True
        self.metrics.request_success["abort"].inc()
        with contextlib.suppress(ValueError):
            self._waiting.remove(request)
            self.metrics.num_requests_waiting.set(len(self._waiting))

    @property
    def alive(self) -> bool:
        """False once the engine loop has ended (crashed or stopped)."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the engine loop on the running event loop."""
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="emulator-engine")

    async def stop(self) -> None:
        """Cancel the engine loop and wait for it to end."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        while True:
            self._running = [request for request in self._running if not request.aborted]
            if not self._running and not self._waiting:
                self._publish_gauges()
                self._wake.clear()
                await self._wake.wait()
                deadline = None
                continue
            admitted: list[EngineRequest] = []
            while self._waiting and len(self._running) + len(admitted) < self.config.max_num_seqs:
                admitted.append(self._waiting.popleft())
            decoding = self._running
            self._running = decoding + admitted
            self._publish_gauges()

            step = self._plan(admitted, decoding)
            if deadline is None:
                start = loop.time()
                if admitted:
                    start = min(start, min(request.arrival_s for request in admitted))
            else:
                start = deadline
            deadline = start + step.duration_s
            for request in admitted:
                # An idle engine's clock starts at the earliest arrival it admits: a later
                # one in the same step is scheduled when it came (queue time never < 0).
                request.scheduled_s = max(start, request.arrival_s)
            await _sleep_until(loop, deadline)
            self._deliver(step, deadline)
            self._running = [
                request
                for request in self._running
                if not request.aborted and request.num_generated < request.max_tokens
            ]

    def _k_after(self, batch_size: int) -> int:
        """The K drafted after a step of `batch_size` requests (prefills included)."""
        if self._schedule is None:
            return self._num_spec_tokens
        return k_for_batch(self._schedule, batch_size, self._num_spec_tokens)

    def _plan(self, admitted: list[EngineRequest], decoding: list[EngineRequest]) -> _PlannedStep:
        config = self.config
        num_spec = self._next_k if decoding else 0
        self._next_k = self._k_after(len(admitted) + len(decoding))
        duration_ms = step_cost_ms(
            config,
            len(admitted),
            len(decoding),
            num_spec,
            drafter_runs=bool(self._num_spec_tokens),
        )
        deliveries: list[tuple[EngineRequest, StepOutput]] = []
        prompt_tokens = 0
        generation_tokens = 0
        for request in admitted:
            prompt_tokens += request.num_prompt_tokens
            generation_tokens += 1
            deliveries.append((request, self._output(request, request.next_token_ids(1))))

        # The per-position counter keeps the maximum's length, as vLLM's.
        accepted_per_position = [0] * self._num_spec_tokens
        num_drafts = 0
        for request in decoding:
            count = 1
            if num_spec:
                accepted = 0
                rng_random = request.rng.random
                for probability in self._acceptance_at(request.num_generated)[:num_spec]:
                    if rng_random() >= probability:
                        break
                    accepted_per_position[accepted] += 1
                    accepted += 1
                request.histogram[accepted] += 1
                if self._per_step:
                    request.per_step_accepted.append(accepted)
                    request.per_step_drafted.append(num_spec)
                request.num_draft_tokens += num_spec
                num_drafts += 1
                count = accepted + 1
            count = min(count, request.max_tokens - request.num_generated)
            generation_tokens += count
            deliveries.append((request, self._output(request, request.next_token_ids(count))))
        return _PlannedStep(
            duration_s=duration_ms / 1000.0,
            deliveries=deliveries,
            prompt_tokens=prompt_tokens,
            generation_tokens=generation_tokens,
            k=num_spec,
            num_drafts=num_drafts,
            num_draft_tokens=num_drafts * num_spec,
            accepted_per_position=accepted_per_position,
        )

    def _acceptance_at(self, start_position: int) -> tuple[float, ...]:
        config = self.config
        key = (
            start_position < config.reasoning_tokens,
            start_position // config.acceptance_decay_tokens
            if config.acceptance_decay != 1.0
            else 0,
        )
        acceptance = self._acceptance_cache.get(key)
        if acceptance is None:
            acceptance = step_acceptance(config, start_position)
            self._acceptance_cache[key] = acceptance
        return acceptance

    def _output(self, request: EngineRequest, token_ids: list[int]) -> StepOutput:
        if request.num_generated < request.max_tokens:
            return StepOutput(token_ids=token_ids, finish_reason=None)
        spec = (
            request.spec_decode_metrics(self._num_spec_tokens, self._per_step)
            if self._attach_spec_metrics
            else None
        )
        return StepOutput(token_ids=token_ids, finish_reason="length", spec_decode_metrics=spec)

    def _deliver(self, step: _PlannedStep, step_end_s: float) -> None:
        metrics = self.metrics
        # Counters move before any client sees the step's tokens: a scrape right after
        # the last chunk must already include them.
        metrics.prompt_tokens.inc(step.prompt_tokens)
        metrics.generation_tokens.inc(step.generation_tokens)
        if self._num_spec_tokens and step.num_drafts:
            metrics.observe_spec_step(
                step.num_drafts, step.num_draft_tokens, step.accepted_per_position
            )
        metrics.iteration_tokens.observe(step.prompt_tokens + step.generation_tokens)
        now = asyncio.get_running_loop().time()
        length_finished = 0
        for request, output in step.deliveries:
            if request.aborted:
                continue
            # As vLLM: ITL is per engine output (one step), not per token.
            if request.last_token_s:
                metrics.inter_token_latency.observe(now - request.last_token_s)
            else:
                metrics.time_to_first_token.observe(now - request.arrival_s)
                metrics.request_prompt_tokens.observe(request.num_prompt_tokens)
                request.first_token_s = step_end_s
            request.last_token_s = now
            request.last_step_end_s = step_end_s
            if output.finish_reason is not None:
                if self.config.enable_per_request_metrics:
                    output.timing_metrics = request.timing_metrics()
                length_finished += 1
                metrics.e2e_request_latency.observe(now - request.arrival_s)
                metrics.request_generation_tokens.observe(request.num_generated)
            request.outputs.put_nowait(output)
        if length_finished:
            metrics.request_success["length"].inc(length_finished)

    def _publish_gauges(self) -> None:
        metrics = self.metrics
        metrics.num_requests_running.set(len(self._running))
        metrics.num_requests_waiting.set(len(self._waiting))
        used = sum(request.num_prompt_tokens + request.num_generated for request in self._running)
        metrics.kv_cache_usage_perc.set(min(1.0, used / self.config.kv_cache_tokens))
