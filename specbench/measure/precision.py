"""Precision-targeted cells: stratified order, bootstrap confidence intervals, stopping rule.

A cell with a precision target dispatches its conversations round-robin over categories
(seeded shuffle inside each category), and stops dispatching once every targeted figure's
95% confidence half-width, relative to the figure, is at most the target. What is in
flight then drains and is kept, so the measured set is always the first N conversations of
the stratified order: no conversation is dropped for being slow.

The intervals come from the per-request records by the percentile bootstrap, resampling
whole conversations (turns of one conversation are not independent):

- `e2e_ms_median`, `ttft_ms_median`: the median over all turns of the resampled
  conversations (lower is better).
- `output_tok_s_per_gpu` (higher is better): its sampling spread is that of the slot-time
  ratio `c × Σ output tokens / Σ E2E` over the resampled conversations (in a closed loop
  every slot is busy, so that ratio is the steady-state throughput up to the microsecond
  gaps between a turn's end and the next send); the figure itself is the steady-state
  window's throughput (`steady_state_window`).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import Executor, Future

import numpy as np

from specbench.client.record import RequestRecord
from specbench.data.conversation import Conversation
from specbench.stats.bootstrap import (
    BOOTSTRAP_RESAMPLES,
    Interval,
    cluster_and_block_weights,
    resampled_quantiles,
    widest_interval,
)

#: Conversations per category a precision-targeted cell measures before it may stop.
FLOOR_PER_CATEGORY = 3
#: The figures a precision target applies to, in the order they are reported.
TARGETED_FIGURES = ("output_tok_s_per_gpu", "e2e_ms_median", "ttft_ms_median")


def stratified_order(conversations: Sequence[Conversation], seed: int) -> list[Conversation]:
    """Round-robin over categories (sorted by name), each category shuffled with `seed`.

    Any prefix of the result holds every category in proportion, to within one conversation.
    """
    by_category: dict[str, list[Conversation]] = defaultdict(list)
    for conversation in conversations:
        by_category[conversation.category].append(conversation)
    rng = random.Random(seed)
    queues = []
    for category in sorted(by_category):
        members = list(by_category[category])
        rng.shuffle(members)
        queues.append(members)
    ordered: list[Conversation] = []
    depth = max((len(q) for q in queues), default=0)
    # Large categories keep their share: take ⌈len/depth × round⌉ per round, not one each.
    for position in range(depth):
        for queue in queues:
            share = len(queue) / depth
            start, end = round(position * share), round((position + 1) * share)
            ordered.extend(queue[start:end])
    return ordered


def default_floor(conversations: Sequence[Conversation]) -> int:
    """`FLOOR_PER_CATEGORY` conversations per category (capped at the dataset)."""
    categories = {c.category for c in conversations}
    return min(len(conversations), FLOOR_PER_CATEGORY * max(1, len(categories)))


def steady_state_window(records: Sequence[RequestRecord]) -> tuple[float, int] | None:
    """(seconds, output tokens) of the steady-state window: from its start until a slot idles.

    The last conversation to be dispatched starts at T_d (its first turn's send); after
    T_d no slot takes new work, so the first conversation to end after T_d frees the first
    idle slot. Until then all c slots were busy. Tokens are those of chunks that arrived
    inside [0, end]. None when nothing succeeded.
    """
    first_start: dict[str, int] = {}
    last_end: dict[str, int] = {}
    for r in records:
        first_start[r.question_id] = min(first_start.get(r.question_id, r.start_ns), r.start_ns)
        end = r.start_ns + (r.e2e_ns or 0)
        last_end[r.question_id] = max(last_end.get(r.question_id, end), end)
    if not first_start:
        return None
    last_dispatch = max(first_start.values())
    end_ns = min((e for e in last_end.values() if e > last_dispatch), default=None)
    if end_ns is None:  # the last dispatched conversation failed instantly
        end_ns = max(last_end.values())
    if end_ns <= 0:
        return None
    tokens = sum(
        count
        for r in records
        if r.ok
        for offset, count in zip(r.chunk_offsets_ns, r.chunk_tokens, strict=False)
        if r.start_ns + offset <= end_ns
    )
    return end_ns / 1e9, tokens


def bootstrap_intervals(
    records: Sequence[RequestRecord],
    concurrency: int,
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
    throughput_value: float | None = None,
) -> dict[str, Interval]:
    """95% intervals of the targeted figures, resampling conversations; {} without data.

    Two resamplings, and each figure keeps the wider of their intervals:
    - whole conversations, independently (turns of one conversation are not independent);
    - `stats.bootstrap.TIME_BLOCKS` contiguous blocks of conversations in dispatch order
      (a block bootstrap): a closed loop can settle into timing regimes that last hundreds of
      requests (e.g. at c = 2 the two slots phase-locking into one engine step or not,
      moving the median TTFT by 25%), and conversations of one regime are not independent;
      resampling them one by one would state a precision the next run does not reproduce.

    `throughput_value` is the point value reported for throughput (the steady-state
    figure); its interval is the slot-time ratio's relative interval scaled onto it.
    """
    conversations: dict[str, list[RequestRecord]] = defaultdict(list)
    for r in sorted(records, key=lambda r: r.start_ns):
        if r.ok and r.e2e_ns is not None:
            conversations[r.question_id].append(r)
    if len(conversations) < 2:
        return {}
    groups = list(conversations.values())  # in dispatch order (first turn's send)
    e2e = [np.array([r.e2e_ns for r in g], dtype=float) / 1e6 for g in groups]
    ttft = [
        np.array([r.ttft_ns for r in g if r.ttft_ns is not None], dtype=float) / 1e6 for g in groups
    ]
    tokens = np.array([sum(r.output_tokens or 0 for r in g) for g in groups], dtype=float)
    busy_s = np.array([sum(r.e2e_ns or 0 for r in g) for g in groups], dtype=float) / 1e9
    weightings = cluster_and_block_weights(len(groups), resamples, np.random.default_rng(seed))

    def pooled_median(values: list[np.ndarray]) -> Interval:
        stats = [resampled_quantiles(values, times, (0.5,))[0] for times in weightings]
        return widest_interval(float(np.median(np.concatenate(values))), stats)

    # the slot-time ratio c × Σ tokens / Σ E2E, per resample (weights: times drawn)
    ratio = concurrency * tokens.sum() / busy_s.sum()
    ratios = [concurrency * (times @ tokens) / (times @ busy_s) for times in weightings]
    scale = (throughput_value / ratio) if throughput_value and ratio > 0 else 1.0
    throughput = widest_interval(ratio, ratios)
    result = {
        "output_tok_s_per_gpu": Interval(
            ratio * scale if throughput_value is None else throughput_value,
            throughput.low * scale,
            throughput.high * scale,
        ),
        "e2e_ms_median": pooled_median(e2e),
    }
    if all(len(v) for v in ttft):
        result["ttft_ms_median"] = pooled_median(ttft)
    return result


def precise_enough(intervals: dict[str, Interval], target: float) -> bool:
    """Every targeted figure has an interval and its relative half-width is ≤ `target`."""

    def interval(name: str) -> Interval | None:
        if name == "output_tok_s_per_gpu" and name not in intervals:
            return intervals.get("output_tok_s")  # per server when the GPU count is unknown
        return intervals.get(name)

    return all(
        (i := interval(name)) is not None and i.relative_half_width <= target
        for name in TARGETED_FIGURES
    )


class StoppingRule:
    """Watches a cell's records; `should_stop()` once the floor is met and figures are precise.

    The check runs on completed conversations only, every ~10% more of them (bootstrapping
    after every request would cost more CPU than the client itself). Given an `executor`,
    a check runs there and its verdict is taken up by the first `observe` or `should_stop`
    after it finishes, so the event loop that streams the requests never waits for it (a
    stalled loop would stretch every in-flight request and bias the cell's figures); one
    check at a time, and the records come in while it runs. Without one it runs inline.
    """

    def __init__(
        self,
        target: float,
        floor: int,
        concurrency: int,
        seed: int,
        executor: Executor | None = None,
    ) -> None:
        self.target = target
        self.floor = floor
        self.concurrency = concurrency
        self.seed = seed
        self.records: list[RequestRecord] = []
        self.completed = 0
        self.next_check = floor
        self.stopped = False
        self.checks = 0
        self.last: dict[str, Interval] = {}
        self._executor = executor
        self._pending: Future[dict[str, Interval]] | None = None

    def observe(self, record: RequestRecord) -> None:
        self.records.append(record)
        if not record.ok or record.turn == record.num_turns - 1:
            self.completed += 1
        self._take_finished_check()
        if self.stopped or self._pending is not None or self.completed < self.next_check:
            return
        self.next_check = self.completed + max(1, self.completed // 10)
        done = {r.question_id for r in self.records if not r.ok or r.turn == r.num_turns - 1}
        finished = [r for r in self.records if r.question_id in done]
        if self._executor is None:
            self._apply(self._intervals(finished))
        else:
            self._pending = self._executor.submit(self._intervals, finished)

    def should_stop(self) -> bool:
        self._take_finished_check()
        return self.stopped

    def worst(self) -> float | None:
        """The largest relative half-width of the last check (progress display)."""
        if not self.last:
            return None
        return max(i.relative_half_width for i in self.last.values())

    def _intervals(self, finished: list[RequestRecord]) -> dict[str, Interval]:
        return bootstrap_intervals(
            finished, self.concurrency, seed=self.seed, resamples=BOOTSTRAP_RESAMPLES // 2
        )

    def _take_finished_check(self) -> None:
        if self._pending is not None and self._pending.done():
            pending, self._pending = self._pending, None
            self._apply(pending.result())

    def _apply(self, intervals: dict[str, Interval]) -> None:
        self.last = intervals
        self.checks += 1
        self.stopped = precise_enough(intervals, self.target)
