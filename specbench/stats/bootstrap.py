"""Bootstraps over clusters (a conversation's turns are one cluster): stratified, by
contiguous blocks, percentile intervals, weighted quantiles of resampled values.

A resample is written as counts: times[r, i] is how often resample r drew cluster i, so a
statistic that is a sum over clusters is one matrix product over every resample at once
(`draw_counts`). Draws come from a seeded `numpy.random.Generator` the caller passes, so a
figure's interval is the same on every rerun of its analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Bootstrap resamples per interval (the interval ends move by < 1% of the width past ~200).
BOOTSTRAP_RESAMPLES = 400
CONFIDENCE = 0.95
#: Contiguous blocks (in dispatch order) of the block bootstrap; it needs ≥ 2 per block.
TIME_BLOCKS = 10


@dataclass(frozen=True, slots=True)
class Interval:
    """A figure, its 95% percentile-bootstrap interval, and half-width / |value|."""

    value: float
    low: float
    high: float

    @property
    def relative_half_width(self) -> float:
        """(high − low) / 2 / |value|; lower is more precise; inf when the value is 0."""
        if self.value == 0:
            return float("inf")
        return (self.high - self.low) / 2 / abs(self.value)


def cluster_and_block_weights(
    clusters: int, resamples: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Resample weights (times[r, i]) of two bootstraps of `clusters` clusters in order.

    First the clusters drawn independently; then, with at least 2 clusters per block,
    `TIME_BLOCKS` contiguous blocks of them drawn whole (a block bootstrap: neighbours in
    dispatch order that share a timing regime are not independent).
    """
    weightings = [draw_counts(rng.integers(0, clusters, size=(resamples, clusters)), clusters)]
    if clusters >= 2 * TIME_BLOCKS:
        block_of = np.arange(clusters) * TIME_BLOCKS // clusters
        blocks = draw_counts(
            rng.integers(0, TIME_BLOCKS, size=(resamples, TIME_BLOCKS)), TIME_BLOCKS
        )
        weightings.append(blocks[:, block_of])
    return weightings


def widest_interval(value: float, per_weighting: Sequence[np.ndarray]) -> Interval:
    """`value` with the widest of the percentile intervals of each bootstrap's statistics."""
    alpha = (1 - CONFIDENCE) / 2
    ends = [np.quantile(stats, [alpha, 1 - alpha]) for stats in per_weighting]
    return Interval(value, float(min(e[0] for e in ends)), float(max(e[1] for e in ends)))


def resample_draws(strata: Sequence[int], resamples: int, rng: np.random.Generator) -> np.ndarray:
    """draws[r, j]: the conversation resample r drew j-th, resampling inside each stratum.

    `strata` gives the conversations per stratum, in column order (stratum 0's columns
    first); each resample draws as many conversations of a stratum as it holds, with
    replacement, so a resample keeps the measured mix of categories. Each row is then
    shuffled: the order a closed loop would dispatch the drawn conversations in.
    """
    blocks = []
    start = 0
    for size in strata:
        blocks.append(start + rng.integers(0, size, size=(resamples, size)))
        start += size
    return rng.permuted(np.concatenate(blocks, axis=1), axis=1)


def draw_counts(draws: np.ndarray, conversations: int) -> np.ndarray:
    """times[r, i]: how often resample r drew conversation i (one bincount over all rows)."""
    resamples = draws.shape[0]
    flat = (np.arange(resamples)[:, None] * conversations + draws).ravel()
    counts = np.bincount(flat, minlength=resamples * conversations)
    return counts.reshape(resamples, conversations).astype(float)


def makespans(durations: np.ndarray, slots: int) -> np.ndarray:
    """Per row, the time `slots` workers take to run the row's jobs in order (closed loop).

    durations[r, j]: the j-th job of resample r; each job goes to the first slot free
    (list scheduling), as a closed loop hands the next conversation to the first free slot.
    """
    resamples = durations.shape[0]
    free = np.zeros((resamples, max(1, slots)))
    rows = np.arange(resamples)
    for j in range(durations.shape[1]):
        slot = free.argmin(axis=1)
        free[rows, slot] += durations[:, j]
    return free.max(axis=1)


def resampled_quantiles(
    values: Sequence[np.ndarray], times: np.ndarray, quantiles: Sequence[float]
) -> list[np.ndarray]:
    """Per quantile q, its value in every resample: the weighted lower q-quantile of the turns.

    `values[i]` are conversation i's per-turn values; a value enters resample r
    times[r, i] times. One sort of all values, then per resample the first value whose
    cumulative weight reaches q (vectorised, so a check never stalls the event loop).
    Conversations without values contribute nothing.
    """
    flat = np.concatenate(values)
    owner = np.repeat(np.arange(len(values)), [len(v) for v in values])
    order = np.argsort(flat, kind="stable")
    weights = np.cumsum(times[:, owner[order]], axis=1)
    total = weights[:, -1:]
    result = []
    for q in quantiles:
        index = np.minimum((weights < q * total).sum(axis=1), len(flat) - 1)
        result.append(flat[order][index])
    return result


def bootstrap_ratio_of_means(
    numerator: Sequence[Sequence[float]],
    denominator: Sequence[Sequence[float]],
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> Interval | None:
    """mean(numerator values) / mean(denominator values), with its 95% percentile bootstrap.

    Each argument lists the values of each conversation (its turns); the two arms are
    resampled independently, by whole conversations. None when an arm has no value or a
    mean is 0.
    """

    def prepared(groups: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray] | None:
        kept = [g for g in groups if len(g)]
        if not kept:
            return None
        sums = np.array([float(sum(g)) for g in kept])
        counts = np.array([len(g) for g in kept], dtype=float)
        return sums, counts

    top, bottom = prepared(numerator), prepared(denominator)
    if top is None or bottom is None or bottom[0].sum() == 0:
        return None
    rng = np.random.default_rng(seed)
    alpha = (1 - CONFIDENCE) / 2

    def resampled_means(arm: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        sums, counts = arm
        draws = rng.integers(0, len(sums), size=(resamples, len(sums)))
        return sums[draws].sum(axis=1) / counts[draws].sum(axis=1)

    value = (top[0].sum() / top[1].sum()) / (bottom[0].sum() / bottom[1].sum())
    below = resampled_means(bottom)
    ratios = resampled_means(top)[below > 0] / below[below > 0]
    low, high = np.quantile(ratios, [alpha, 1 - alpha])
    return Interval(float(value), float(low), float(high))
