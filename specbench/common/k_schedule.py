"""vLLM 0.32's `num_speculative_tokens_per_batch_size`: the rules of a K schedule and its lookup.

A schedule is `[[start, end, K], …]`: inclusive ranges of the batch size (the requests one
engine step schedules, prefills included), the first starting at 1, sorted and
non-overlapping, each K ≥ 0. A batch size in a gap between ranges, or past the last one,
takes the previous range's K; every K is clamped to `num_speculative_tokens`, the maximum
(`vllm/v1/spec_decode/dynamic/utils.py`). vLLM sorts the ranges before its check; here an
unsorted list is refused, so a schedule that passes is written as vLLM reads it.

It lives in `common` because the emulator follows it, a suite's `[emulator]` table checks
it before any server starts, and advice that emits a schedule must check it too. Standard
library only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import cast

#: `(start, end, K)` ranges, as checked by `check_schedule`.
KSchedule = tuple[tuple[int, int, int], ...]

_SHAPE = "expected [[start, end, K], …], e.g. [[1,4,5],[5,16,3],[17,1024,1]]"


def check_schedule(entries: Sequence[Sequence[object]]) -> KSchedule:
    """The schedule as integer triples, or ValueError naming the first rule it breaks:
    at least one range; each a triple of integers with 1 ≤ start ≤ end and K ≥ 0; the
    first starting at 1; each starting after the previous one ends (sorted, no overlap).
    K above the maximum is allowed: vLLM clamps it (`k_for_batch`)."""
    if isinstance(entries, str | bytes) or not entries:
        raise ValueError(f"needs at least one range; {_SHAPE}")
    ranges: list[tuple[int, int, int]] = []
    for entry in entries:
        if isinstance(entry, str | bytes) or len(entry) != 3:
            raise ValueError(f"range {entry!r} is not [start, end, K]; {_SHAPE}")
        if any(not isinstance(value, int) or isinstance(value, bool) for value in entry):
            raise ValueError(f"range {list(entry)!r}: start, end and K must be integers")
        start, end, k = (cast(int, value) for value in entry)
        if start < 1:
            raise ValueError(f"range {[start, end, k]}: start must be at least 1")
        if start > end:
            raise ValueError(f"range {[start, end, k]}: start is after end")
        if k < 0:
            raise ValueError(f"range {[start, end, k]}: K must be 0 or more")
        if ranges and start <= ranges[-1][1]:
            previous = list(ranges[-1])
            if start < ranges[-1][0]:
                raise ValueError(f"range {[start, end, k]} comes after {previous}: sort the ranges")
            raise ValueError(f"range {[start, end, k]} overlaps {previous}")
        ranges.append((start, end, k))
    if ranges[0][0] != 1:
        raise ValueError(f"the first range {list(ranges[0])} must start at 1")
    return tuple(ranges)


def parse_schedule(text: str) -> KSchedule:
    """A schedule from its JSON text (as `--speculative-config` writes it), checked."""
    try:
        entries = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(f"{text!r} is not JSON; {_SHAPE}") from None
    if not isinstance(entries, list) or not all(isinstance(entry, list) for entry in entries):
        raise ValueError(f"{text!r}: {_SHAPE}")
    return check_schedule(entries)


def k_for_batch(schedule: KSchedule, batch_size: int, k_max: int) -> int:
    """The K vLLM drafts after a step of `batch_size` requests: the K of the range holding
    it, else of the last range starting before it (a gap or the tail), at most `k_max`."""
    if batch_size < 1:
        raise ValueError(f"batch size {batch_size}: at least 1")
    k = schedule[0][2]
    for start, _end, range_k in schedule:
        if start > batch_size:
            break
        k = range_k
    return min(k, k_max)
