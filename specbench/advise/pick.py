"""The pick: the best K at one concurrency, with its tie rule, its gains and its exclusions.

At one workload × concurrency × objective, each fixed config (the baseline is K = 0) has
its launch-level interval (`analysis.intervals.figure_interval`). The rules, after vLLM's
closed K tuner (PR #49163) with intervals in place of its medians:

1. **Excluded**: a config whose launches disagree, (max − min) / median of its launch
   values > 10%: its mean would average two regimes away. It is named, never used.
2. **Best**: the highest value (lowest, for a latency objective).
3. **Ties go to the smaller K**: a config ties with the best when the best's advantage
   over it, the ratio best / other (other / best for a latency), is under 1% or its 95%
   interval reaches 1 (`stats.launches.ratio_interval`). The advised K is the smallest K
   among the best and its ties: a K that cannot be told from the best costs less to run.
   Nothing forces K to fall as concurrency rises: a non-monotone optimum is kept.
4. **Gain**: the advised config's improvement in the objective's better direction, with
   its interval: value / other − 1 for throughput (+10%: 10% more tok/s), 1 − value /
   other for a latency (+10%: 10% less), over K = 0 and over the best single K
   (`best_single_k`).

Pure; no pandas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import median

from specbench.metrics.declarations import Direction
from specbench.stats.launches import Interval, ratio_interval

#: Candidates closer than this to the best tie (vLLM's tuner: 1%).
TIE_RELATIVE = 0.01
#: A cell whose launch values spread wider than this, (max − min) / median, is excluded.
DISAGREE_RELATIVE = 0.10


@dataclass(frozen=True, slots=True)
class Candidate:
    """One fixed config's figure at one point: its K, server and interval."""

    k: int
    server: str
    interval: Interval
    #: Each launch's value (the interval's inputs), for the disagreement rule.
    launch_values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Gain:
    """The advised config's improvement over another, in the objective's better direction."""

    value: float
    low: float | None
    high: float | None


@dataclass(frozen=True, slots=True)
class Pick:
    """The advice at one point."""

    chosen: Candidate
    #: The best value's K before the tie rule (the same K when nothing ties).
    best_k: int
    #: The Ks the tie rule found indistinguishable from the best (the chosen one excluded).
    tied_with: tuple[int, ...]
    gain_vs_k0: Gain | None
    #: Filled by `with_single_k`: the gain over the best single K at this point.
    gain_vs_single_k: Gain | None = None


def disagreement(values: Sequence[float]) -> float | None:
    """(max − min) / median of launch values; None below two launches or at a zero median."""
    if len(values) < 2:
        return None
    middle = median(values)
    if middle == 0:
        return None
    return (max(values) - min(values)) / abs(middle)


def excluded_reason(candidate: Candidate, limit: float = DISAGREE_RELATIVE) -> str | None:
    """Why a candidate is not used, or None: its launches disagree beyond `limit` (10%;
    `specbench advise --max-launch-spread` on a platform whose launches are noisier)."""
    spread = disagreement(candidate.launch_values)
    if spread is None or spread <= limit:
        return None
    values = ", ".join(f"{v:.4g}" for v in candidate.launch_values)
    return (
        f"its {len(candidate.launch_values)} launches disagree by {spread:.1%} "
        f"(> {limit:.0%}): {values}"
    )


def advantage(better: Interval, other: Interval, direction: Direction) -> Interval | None:
    """How much `better` beats `other` as a ratio ≥ 1 when it does: better / other for a
    higher-is-better objective, other / better for a latency; with its interval."""
    if direction == "higher":
        return ratio_interval(better, other)
    return ratio_interval(other, better)


def ties(best: Interval, other: Interval, direction: Direction) -> bool:
    """Whether `other` cannot be told from `best`: under 1% behind, or the interval of the
    best's advantage reaches 1 (no bounds: only the 1% rule applies)."""
    ratio = advantage(best, other, direction)
    if ratio is None:
        return False
    if ratio.value < 1.0 + TIE_RELATIVE:
        return True
    return ratio.low is not None and ratio.low <= 1.0


def gain(chosen: Interval, other: Interval, direction: Direction) -> Gain | None:
    """`chosen`'s improvement over `other` (module docstring, rule 4), with bounds."""
    ratio = ratio_interval(chosen, other)
    if ratio is None:
        return None

    def turn(value: float | None) -> float | None:
        if value is None or not math.isfinite(value):
            return None
        return value - 1.0 if direction == "higher" else 1.0 - value

    low, high = turn(ratio.low), turn(ratio.high)
    if direction == "lower":
        low, high = high, low
    return Gain(value=turn(ratio.value) or 0.0, low=low, high=high)


def _better(a: float, b: float, direction: Direction) -> bool:
    return a > b if direction == "higher" else a < b


def pick(candidates: Sequence[Candidate], direction: Direction) -> Pick | None:
    """The advised K among `candidates` (already cleared of exclusions); None if none."""
    if not candidates:
        return None
    best = candidates[0]
    for candidate in candidates[1:]:
        value, top = candidate.interval.value, best.interval.value
        if _better(value, top, direction) or (value == top and candidate.k < best.k):
            best = candidate
    tied = [c for c in candidates if c is not best and ties(best.interval, c.interval, direction)]
    chosen = min([best, *tied], key=lambda c: c.k)
    tied_with = tuple(sorted(c.k for c in [best, *tied] if c is not chosen))
    baseline = next((c for c in candidates if c.k == 0), None)
    gain_vs_k0 = (
        gain(chosen.interval, baseline.interval, direction)
        if baseline is not None and chosen is not baseline
        else None
    )
    return Pick(chosen, best.k, tied_with, gain_vs_k0)


def best_single_k(points: Mapping[int, Sequence[Candidate]], direction: Direction) -> int | None:
    """The one speculative K (≥ 1) a static deployment would ship: among the Ks measured at
    every concurrency, the K with the highest geometric mean of its value relative to that
    concurrency's best of them (so each concurrency weighs the same whatever its scale).
    `points`: concurrency → its candidates. A K measured at only some concurrencies (a
    planned search adds a pick's neighbours where that pick is: `advise.plan`) is no
    single K: it was never compared everywhere. None without a K ≥ 1 measured at every
    concurrency."""
    measured = [{c.k for c in cs if c.k >= 1} for cs in points.values()]
    measured = [ks for ks in measured if ks]
    if not measured:
        return None
    ks = sorted(set.intersection(*measured))
    if not ks:
        return None
    logs: dict[int, float] = dict.fromkeys(ks, 0.0)
    used = 0
    for candidates in points.values():
        by_k = {c.k: c.interval.value for c in candidates if c.k in logs}
        if set(by_k) != set(ks) or any(v <= 0 for v in by_k.values()):
            continue
        top = max(by_k.values()) if direction == "higher" else min(by_k.values())
        for k, value in by_k.items():
            relative = value / top if direction == "higher" else top / value
            logs[k] += math.log(relative)
        used += 1
    if not used:
        return None
    return max(ks, key=lambda k: (logs[k], -k))


def with_single_k(
    chosen: Pick, candidates: Sequence[Candidate], single: int | None, direction: Direction
) -> Pick:
    """`chosen` with its gain over the best single K at the same point, where measured."""
    other = next((c for c in candidates if c.k == single), None)
    if other is None or single is None:
        return chosen
    found = (
        Gain(0.0, 0.0, 0.0)
        if other is chosen.chosen
        else gain(chosen.chosen.interval, other.interval, direction)
    )
    return replace(chosen, gain_vs_single_k=found)
