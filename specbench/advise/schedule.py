"""The K schedule to paste: vLLM 0.32's `num_speculative_tokens_per_batch_size` from the picks.

vLLM chooses K from the number of requests one engine step schedules (prefills included),
not from the client's concurrency. So each concurrency's advised K is placed at its
cell's **measured running batch** (the time-weighted mean of `vllm:num_requests_running`
over the window, `summary.json` `running_batch_mean`). Between two neighbouring points
with running batches b₁ < b₂ the K changes at ⌊√(b₁·b₂)⌋ + 1 (the geometric midpoint: the
concurrencies a sweep measures are spaced geometrically, and so are their batches);
ranges with the same K merge; the first starts at 1 and the last runs to `TAIL_END`
(vLLM repeats the last range's K past it anyway). `num_speculative_tokens` is the largest
K used: vLLM still needs it as the maximum (buffers, KV look-ahead).

Results measured before the running batch was recorded have no such figure: the
concurrency stands in for it, and the schedule says so (`mapped_on`).

The schedule is checked against vLLM's rules (`common.k_schedule.check_schedule`) before
it is returned, and carries the caveats that apply to it. Pure; no pandas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from specbench.advise.configs import SCHEDULE_KEY
from specbench.common.k_schedule import KSchedule, check_schedule

#: The last range's end: vLLM repeats the last K past it, so any end works; 1024 reads as
#: "everything above".
TAIL_END = 1024
#: Methods under which vLLM 0.32 asserts K equals the maximum and crashes with a schedule.
CRASHING_METHODS = ("suffix", "medusa", "ngram_gpu")
#: What is said beside every schedule (vLLM 0.32's code and issue #49548).
CAVEATS = (
    "a range with K = 0 is not the baseline: eagle, eagle3, mtp and draft_model still run "
    "one drafter forward per step there",
    "vLLM drops the schedule silently when --data-parallel-size > 1",
    f"methods {', '.join(CRASHING_METHODS)} crash under a schedule",
    "vLLM checks the ranges only after the weights load; this one passed the same rules",
    "upstream issue #49548 reports throughput collapsing at a schedule's threshold and "
    "+6.6% TPOT at c = 2 from enabling one: measure it (a server may name "
    'num_speculative_tokens_per_batch_size = "advised") before shipping it',
)

MappedOn = Literal["running_batch", "concurrency"]


@dataclass(frozen=True, slots=True)
class SchedulePoint:
    """One concurrency's advised K, placed at its batch."""

    concurrency: int
    k: int
    #: The cell's measured running batch; None in results without one.
    running_batch: float | None


@dataclass(frozen=True, slots=True)
class EmittedSchedule:
    """A schedule ready for `--speculative-config`, and how it was made."""

    ranges: KSchedule
    speculative_config: dict[str, Any]
    mapped_on: MappedOn
    #: (concurrency, batch it was placed at, K) of each point, in batch order.
    placed: tuple[tuple[int, float, int], ...]
    caveats: tuple[str, ...] = CAVEATS


def _boundary(low: float, high: float) -> int:
    """The last batch size of the lower point's range: ⌊√(low·high)⌋, at least ⌊low⌋."""
    return max(math.floor(math.sqrt(low * high)), math.floor(low), 1)


def ranges_for(placed: Sequence[tuple[float, int]]) -> KSchedule:
    """`[[start, end, K], …]` from (batch, K) points: one range per point, the change at the
    geometric midpoint of neighbouring batches, equal neighbours merged, checked."""
    points = sorted(placed)
    ranges: list[list[int]] = []
    start = 1
    for index, (batch, k) in enumerate(points):
        last = index == len(points) - 1
        end = TAIL_END if last else _boundary(batch, points[index + 1][0])
        end = max(end, start)
        if ranges and ranges[-1][2] == k:
            ranges[-1][1] = end
        else:
            ranges.append([start, end, k])
        start = end + 1
        if start > TAIL_END:
            break
    return check_schedule(ranges)


def emit_schedule(
    points: Sequence[SchedulePoint], speculative: Mapping[str, Any]
) -> EmittedSchedule | None:
    """The schedule of `points` for the speculative config `speculative` (the sweep's
    `--speculative-config` mapping: method, model, …); None when every point's K is 0
    (the baseline wins everywhere: ship no speculation) or there is no point.

    ValueError when the method crashes under a schedule.
    """
    if not points or all(p.k == 0 for p in points):
        return None
    method = str(speculative.get("method"))
    if method in CRASHING_METHODS:
        raise ValueError(f"method {method!r} crashes under a schedule in vLLM 0.32")
    measured = all(p.running_batch is not None for p in points)
    mapped_on: MappedOn = "running_batch" if measured else "concurrency"
    placed = sorted(
        (
            (p.running_batch if measured and p.running_batch is not None else float(p.concurrency)),
            p.k,
            p.concurrency,
        )
        for p in points
    )
    ranges = ranges_for([(batch, k) for batch, k, _ in placed])
    config = {key: value for key, value in speculative.items() if key != SCHEDULE_KEY}
    config["num_speculative_tokens"] = max(k for _, _, k in ranges)
    config[SCHEDULE_KEY] = [list(r) for r in ranges]
    return EmittedSchedule(
        ranges=ranges,
        speculative_config=config,
        mapped_on=mapped_on,
        placed=tuple((c, batch, k) for batch, k, c in placed),
    )
