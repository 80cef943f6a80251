"""The pick's rules (advise/pick.py) on hand-made launch values."""

from __future__ import annotations

import math

import pytest

from specbench.advise.pick import (
    Candidate,
    best_single_k,
    disagreement,
    excluded_reason,
    gain,
    pick,
    ties,
    with_single_k,
)
from specbench.stats.launches import launch_interval


def cand(k: int, *values: float) -> Candidate:
    """K's candidate from its launch values (no within-launch errors)."""
    return Candidate(k, f"s-k{k}", launch_interval(list(values), [None] * len(values)), values)


def test_the_best_wins_when_nothing_ties() -> None:
    # K = 3 beats K = 2 by 10% with launches within 0.5%: no tie.
    chosen = pick([cand(0, 100, 101, 99), cand(2, 150, 151, 149), cand(3, 165, 166, 164)], "higher")
    assert chosen is not None
    assert (chosen.chosen.k, chosen.best_k, chosen.tied_with) == (3, 3, ())
    assert chosen.gain_vs_k0 is not None
    assert chosen.gain_vs_k0.value == pytest.approx(0.65)
    assert chosen.gain_vs_k0.low is not None and 0.6 < chosen.gain_vs_k0.low < 0.65


def test_within_one_percent_goes_to_the_smaller_k() -> None:
    # K = 4 is 0.6% ahead of K = 3: a tie, and the smaller K is advised.
    chosen = pick([cand(3, 200, 200, 200), cand(4, 201.2, 201.2, 201.2)], "higher")
    assert chosen is not None
    assert (chosen.chosen.k, chosen.best_k, chosen.tied_with) == (3, 4, (4,))


def test_an_interval_that_reaches_one_ties_even_past_one_percent() -> None:
    # K = 5 is 3% ahead on average, but its launches spread 190–230: the ratio's interval
    # reaches 1, so it cannot be told from K = 4.
    best, other = cand(5, 190, 230, 198), cand(4, 200, 201, 199)
    assert ties(best.interval, other.interval, "higher")
    chosen = pick([other, best], "higher")
    assert chosen is not None and chosen.chosen.k == 4 and chosen.tied_with == (5,)


def test_a_latency_objective_picks_the_lowest_and_words_its_gain_as_time_saved() -> None:
    chosen = pick([cand(0, 2000, 2010, 1990), cand(2, 1500, 1505, 1495)], "lower")
    assert chosen is not None and chosen.chosen.k == 2
    assert chosen.gain_vs_k0 is not None
    assert chosen.gain_vs_k0.value == pytest.approx(0.25)  # 25% less latency
    low, high = chosen.gain_vs_k0.low, chosen.gain_vs_k0.high
    assert low is not None and high is not None and low < 0.25 < high


def test_gain_is_none_against_a_zero() -> None:
    assert gain(cand(1, 1, 1).interval, cand(0, 0, 0).interval, "higher") is None


def test_launches_that_disagree_beyond_ten_percent_are_excluded() -> None:
    assert disagreement([100, 112]) == pytest.approx(12 / 106)
    assert disagreement([100]) is None
    reason = excluded_reason(cand(2, 100, 112))
    assert reason == "its 2 launches disagree by 11.3% (> 10%): 100, 112"
    assert excluded_reason(cand(2, 100, 109)) is None


def test_a_non_monotone_optimum_is_kept() -> None:
    # Nothing forces K to fall with load: the best here is K = 2, not the endpoints.
    chosen = pick([cand(1, 100, 100), cand(2, 130, 130), cand(3, 110, 110)], "higher")
    assert chosen is not None and chosen.chosen.k == 2


def test_best_single_k_weighs_each_concurrency_alike() -> None:
    # c = 1: K3 best (K1 at 0.5 of it); c = 64: K1 best (K3 at 0.8 of it). Geometric means
    # of the relative values: K1 √0.5 = 0.707, K3 √0.8 = 0.894, K2 √(0.9 · 0.9) = 0.9.
    points = {
        1: [cand(1, 50), cand(2, 90), cand(3, 100)],
        64: [cand(1, 1000), cand(2, 900), cand(3, 800)],
    }
    assert best_single_k(points, "higher") == 2
    chosen = pick(points[64], "higher")
    assert chosen is not None
    with_single = with_single_k(chosen, points[64], 2, "higher")
    assert with_single.gain_vs_single_k is not None
    assert with_single.gain_vs_single_k.value == pytest.approx(1000 / 900 - 1)
    assert best_single_k({1: [cand(0, 5)]}, "higher") is None


def test_best_single_k_compares_only_the_ks_measured_at_every_concurrency() -> None:
    # A planned search added K 2 and 4 at c = 64 only (where K 3 won); K 2 there is the
    # best of all, but it was never measured at c = 1: the single K is among 1, 3, 6.
    # Relative values: K1 0.5 · 0.9, K3 1.0 · 1.0, K6 0.9 · 0.5.
    points = {
        1: [cand(0, 40), cand(1, 50), cand(3, 100), cand(6, 90)],
        64: [cand(0, 900), cand(1, 900), cand(2, 1100), cand(3, 1000), cand(4, 950), cand(6, 500)],
    }
    assert best_single_k(points, "higher") == 3
    # Each concurrency grew a different K: still the Ks common to both.
    points[1].append(cand(5, 200))
    assert best_single_k(points, "higher") == 3
    # No K ≥ 1 common to every concurrency: none.
    assert best_single_k({1: [cand(1, 5)], 4: [cand(2, 5)]}, "higher") is None


def test_an_unbounded_interval_still_picks_by_the_one_percent_rule() -> None:
    # One launch without an error: no bounds, so only the 1% rule can tie.
    chosen = pick([cand(1, 100), cand(2, 103)], "higher")
    assert chosen is not None and chosen.chosen.k == 2
    assert chosen.gain_vs_k0 is None  # no baseline among the candidates
    assert math.isfinite(chosen.chosen.interval.value)


def test_the_cli_s_spread_default_is_the_pick_s_limit() -> None:
    # The CLI module imports only typer at the top (a fast --help), so it writes the
    # default as a literal: this keeps it the pick's one value.
    import inspect

    from specbench.advise.pick import DISAGREE_RELATIVE
    from specbench.cli.advise import advise

    default = inspect.signature(advise).parameters["max_launch_spread"].default
    assert default == DISAGREE_RELATIVE


def test_a_wider_spread_limit_keeps_a_noisy_cell() -> None:
    noisy = cand(2, 100, 125)
    assert excluded_reason(noisy) is not None
    assert excluded_reason(noisy, 0.5) is None
    reason = excluded_reason(noisy, 0.2)
    assert reason is not None and "(> 20%)" in reason
