"""The planned K search (advise/plan.py) on hand-built advice: which neighbours it adds,
when a pick is bracketed and resolved, and the plan file it becomes."""

from __future__ import annotations

import pandas as pd
import pytest

from specbench.advise.advice import Advice, Exclusion, Recommendation
from specbench.advise.configs import AdvisedConfig
from specbench.advise.pick import Candidate, pick
from specbench.advise.plan import NOTHING_LEFT, plan_file, plan_search, sweep_of
from specbench.stats.launches import launch_interval

FIGURE = "output_tok_s_per_gpu"


def cand(k: int, *values: float) -> Candidate:
    """K's candidate from its launch values (the baseline for K = 0)."""
    server = "baseline" if k == 0 else f"eagle3-k{k}"
    return Candidate(k, server, launch_interval(list(values), [None] * len(values)), values)


def tight(k: int, value: float) -> Candidate:
    """Three launches within ±0.1%: an interval narrow enough to separate 1% gaps."""
    return cand(k, value * 0.999, value, value * 1.001)


def recommendation(concurrency: int, candidates: list[Candidate]) -> Recommendation:
    found = pick(candidates, "higher")
    assert found is not None
    return Recommendation(
        "tiny", concurrency, "throughput", FIGURE, "higher", found, None, None, tuple(candidates)
    )


def advice(
    *recommendations: Recommendation, swept: tuple[int, ...] = (1, 3, 6), excluded: tuple = ()
) -> Advice:
    configs = {"baseline": AdvisedConfig("baseline", 0)} | {
        f"eagle3-k{k}": AdvisedConfig(f"eagle3-k{k}", k, sweep="eagle3") for k in swept
    }
    return Advice(recommendations, excluded, None, "", pd.DataFrame(), configs)


def test_a_pick_inside_the_list_adds_both_neighbours_to_bracket_it() -> None:
    coarse = [tight(0, 100), tight(1, 150), tight(3, 200), tight(6, 170)]
    plan = plan_search(advice(recommendation(16, coarse)), "eagle3")
    assert plan.cells == (("eagle3-k2", "tiny", 16), ("eagle3-k4", "tiny", 16))
    assert plan.ks == (1, 2, 3, 4, 6)
    assert plan.launches is None and not plan.done
    assert plan.lines == ("c=16: best K 3 (K 0, 1, 3, 6 measured): add K 2, 4 to bracket it",)


def test_bracketed_and_beating_each_neighbour_is_resolved_and_nothing_is_left() -> None:
    grid = [tight(0, 100), tight(1, 150), tight(2, 190), tight(3, 200), tight(4, 195)]
    grid.append(tight(6, 170))
    plan = plan_search(advice(recommendation(16, grid), swept=(1, 2, 3, 4, 6)), "eagle3")
    assert plan.done and plan.cells == () and plan.ks == (1, 2, 3, 4, 6)
    assert plan.lines == (
        "c=16: best K 3, bracketed by K 2, 4: +5.3% over K 2; +2.6% over K 4: resolved",
        NOTHING_LEFT,
    )


def test_a_pick_at_the_top_edge_adds_only_below_unless_max_k_allows_above() -> None:
    coarse = [tight(0, 100), tight(1, 120), tight(3, 150), tight(6, 180)]
    plan = plan_search(advice(recommendation(1, coarse)), "eagle3")
    assert plan.cells == (("eagle3-k5", "tiny", 1),)
    assert plan.ks == (1, 3, 5, 6)
    assert plan.lines[0] == (
        "c=1: best K 6 (K 0, 1, 3, 6 measured; K 6 is the largest allowed (--max-k 6)): "
        "add K 5 to bracket it"
    )
    wider = plan_search(advice(recommendation(1, coarse)), "eagle3", max_k=7)
    assert wider.cells == (("eagle3-k5", "tiny", 1), ("eagle3-k7", "tiny", 1))
    assert wider.ks == (1, 3, 5, 6, 7)
    # Bracketed from below at the edge: resolved.
    done = plan_search(
        advice(recommendation(1, [*coarse, tight(5, 170)]), swept=(1, 3, 5, 6)), "eagle3"
    )
    assert done.done
    assert done.lines[0] == (
        "c=1: best K 6, bracketed by K 5; K 6 is the largest allowed (--max-k 6): "
        "+5.9% over K 5: resolved"
    )


def test_the_baseline_best_adds_k1_only_where_it_is_unmeasured() -> None:
    without_k1 = [tight(0, 300), tight(3, 200), tight(6, 150)]
    plan = plan_search(advice(recommendation(64, without_k1)), "eagle3")
    assert plan.cells == (("eagle3-k1", "tiny", 64),)
    assert plan.lines[0] == "c=64: best K 0 (K 0, 3, 6 measured): add K 1 to bracket it"
    with_k1 = plan_search(advice(recommendation(64, [tight(1, 250), *without_k1])), "eagle3")
    assert with_k1.done
    assert with_k1.lines[0] == "c=64: best K 0, bracketed by K 1: +20.0% over K 1: resolved"


def test_a_tie_within_one_percent_is_resolved_by_the_rule() -> None:
    # K 4 is 0.5% ahead of K 3: the pick is K 3, and more data would not change the rule.
    grid = [tight(0, 100), tight(2, 180), tight(3, 200), tight(4, 201)]
    plan = plan_search(advice(recommendation(4, grid), swept=(2, 3, 4)), "eagle3")
    assert plan.done
    assert plan.lines[0] == (
        "c=4: best K 3, bracketed by K 2, 4: +11.1% over K 2; ties K 4 within 1% (the "
        "smaller K is kept): resolved"
    )


def test_an_overlapping_interval_asks_more_launches_up_to_max_launches() -> None:
    # K 4 is 3% ahead of K 3, but its launches spread 190–230: the ratio's interval reaches
    # 1. At the launches every cell has (3), the rule keeps K 3; allowed 4, both get one more.
    grid = [tight(0, 100), tight(2, 150), tight(3, 200), cand(4, 190, 230, 198)]
    ties_now = plan_search(advice(recommendation(4, grid), swept=(2, 3, 4, 6)), "eagle3")
    assert ties_now.done and ties_now.launches is None
    assert (
        "ties K 4 through its interval (3.0% apart, 3 launches, the most allowed"
        in (ties_now.lines[0])
    )
    more = plan_search(
        advice(recommendation(4, grid), swept=(2, 3, 4, 6)), "eagle3", max_launches=4
    )
    assert more.cells == (("eagle3-k3", "tiny", 4), ("eagle3-k4", "tiny", 4))
    assert more.launches == 4 and more.ks == (2, 3, 4, 6)
    assert more.lines[0].endswith("add launch 4 of K 3, 4 to resolve it")


def test_an_excluded_neighbour_counts_as_measured() -> None:
    grid = [tight(0, 100), tight(1, 150), tight(3, 200), tight(6, 170)]
    dropped = Exclusion("tiny", "eagle3-k2", 16, "throughput", "its 3 launches disagree")
    plan = plan_search(
        advice(recommendation(16, grid), swept=(1, 2, 3, 6), excluded=(dropped,)), "eagle3"
    )
    assert plan.cells == (("eagle3-k4", "tiny", 16),)
    assert plan.lines[0] == "c=16: best K 3 (K 0, 1, 2, 3, 6 measured): add K 4 to bracket it"


def test_several_concurrencies_plan_each_once_and_become_a_plan_file() -> None:
    low = [tight(0, 100), tight(1, 150), tight(3, 200), tight(6, 170)]
    high = [tight(0, 300), tight(1, 280), tight(3, 200), tight(6, 150)]
    plan = plan_search(advice(recommendation(1, low), recommendation(64, high)), "eagle3")
    assert plan.cells == (("eagle3-k2", "tiny", 1), ("eagle3-k4", "tiny", 1))
    assert plan.lines[1] == "c=64: best K 0, bracketed by K 1: +7.1% over K 1: resolved"
    document = plan_file(plan, "suite-a", "/results/a")
    assert document.model_dump(mode="json") == {
        "suite": "suite-a",
        "results": "/results/a",
        "sweep": "eagle3",
        "k": [1, 2, 3, 4, 6],
        "launches": None,
        "cells": [
            {"server": "eagle3-k2", "workload": "tiny", "concurrency": 1},
            {"server": "eagle3-k4", "workload": "tiny", "concurrency": 1},
        ],
    }


def test_the_sweep_is_the_one_swept_server() -> None:
    assert sweep_of(advice().configs) == "eagle3"
    with pytest.raises(ValueError, match="no K sweep in these results"):
        sweep_of({"baseline": AdvisedConfig("baseline", 0), "x": AdvisedConfig("x", 3)})
    two = {"a-k1": AdvisedConfig("a-k1", 1, sweep="a"), "b-k1": AdvisedConfig("b-k1", 1, sweep="b")}
    with pytest.raises(ValueError, match=r"several K sweeps \(a, b\): a plan grows one"):
        sweep_of(two)
