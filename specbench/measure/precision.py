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
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future

import numpy as np

from specbench.client.record import RequestRecord
from specbench.data.conversation import Conversation
from specbench.metrics.declarations import OUTPUT_TOK_S_PER_GPU, figure_of, targeted
from specbench.stats.bootstrap import (
    BOOTSTRAP_RESAMPLES,
    Interval,
    cluster_and_block_weights,
    resampled_quantiles,
    widest_interval,
)

#: Conversations per category a precision-targeted cell measures before it may stop.
FLOOR_PER_CATEGORY = 3
#: The figures a precision target applies to, in the order they are reported (declared
#: in metrics/declarations.py).
TARGETED_FIGURES = tuple(figure.name for figure in targeted())


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
    result = {}
    for name in TARGETED_FIGURES:
        if name == OUTPUT_TOK_S_PER_GPU.name:
            result[name] = Interval(
                ratio * scale if throughput_value is None else throughput_value,
                throughput.low * scale,
                throughput.high * scale,
            )
            continue
        per_turn, formula = _median_of(name)
        values = [
            np.array([v for r in g if (v := per_turn(r)) is not None], dtype=float) for g in groups
        ]
        if all(len(v) for v in values):
            found: Interval | None = pooled_median(values)
            if formula is not None and found is not None:
                found = _mapped(found, formula)
            if found is not None:
                result[name] = found
    return result


def _median_of(
    name: str,
) -> tuple[Callable[[RequestRecord], float | None], Callable[[float], float | None] | None]:
    """The per-turn value whose median gives the targeted figure `name`, and the formula
    applied to that median when the figure is derived from it (metrics/declarations.py)."""
    figure = figure_of(name)
    formula = None
    if figure is not None and figure.derived is not None:
        formula = figure.derived.formula
        figure = figure_of(figure.derived.source)
    statistic = figure.statistic if figure is not None else None
    source = figure_of(statistic[0]) if statistic is not None else None
    if statistic is None or statistic[1] != "median" or source is None or not source.per_turn:
        raise ValueError(f"{name}: precision targeting bootstraps medians of per-turn values")
    return source.per_turn, formula


def _mapped(interval: Interval, formula: Callable[[float], float | None]) -> Interval | None:
    """`interval` carried through a monotone `formula` (ends swapped when it decreases);
    None where the formula is undefined at the value or an end (no interval: not precise)."""
    value, low, high = (formula(x) for x in (interval.value, interval.low, interval.high))
    if value is None or low is None or high is None:
        return None
    return Interval(value, min(low, high), max(low, high))


def precise_enough(intervals: dict[str, Interval], target: float) -> bool:
    """Every targeted figure has an interval and its relative half-width is ≤ `target`."""

    def interval(name: str) -> Interval | None:
        figure = figure_of(name)
        if name not in intervals and figure is not None and figure.per_server:
            return intervals.get(figure.per_server)  # per server when the GPU count is unknown
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
