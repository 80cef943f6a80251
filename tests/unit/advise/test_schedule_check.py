"""A measured schedule against the advised fixed K (advise/verify.py `_verdict`)."""

from __future__ import annotations

from specbench.advise.pick import advantage
from specbench.advise.verify import _verdict
from specbench.stats.launches import Interval, launch_interval


def interval(*values: float) -> Interval:
    return launch_interval(list(values), [None] * len(values))


def test_wins_ties_and_loses_by_the_pick_s_rule_both_ways() -> None:
    fixed = interval(100, 101, 99)
    assert _verdict(advantage(interval(110, 111, 109), fixed, "higher")) == "wins"
    assert _verdict(advantage(interval(90, 91, 89), fixed, "higher")) == "loses"
    # 0.5% behind: within 1%, a tie (the ratio is under 1, which `pick.ties` alone misreads).
    assert _verdict(advantage(interval(99.5, 99.5, 99.5), fixed, "higher")) == "ties"
    # 4% ahead but launches spread 90–118: the ratio's interval holds 1.
    assert _verdict(advantage(interval(90, 118, 104), fixed, "higher")) == "ties"
    # A latency: lower wins.
    assert _verdict(advantage(interval(80, 81, 79), fixed, "lower")) == "wins"
    assert _verdict(None) == "unknown"
