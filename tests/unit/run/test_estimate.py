"""The cost model on known closed loops: what a cell of N conversations takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from analysis_fixtures import summary as cell_summary
from harness import REPO

from specbench.run.estimate import (
    Estimate,
    _cell_estimate,
    _point,
    cap_bound,
    describe_estimate,
    server_starts,
)
from specbench.run.plan import RunOptions, plan_suite
from specbench.suite import load_suite
from specbench.suite.model import Cell

SUITE = REPO / "suites" / "emulator.toml"


def summary(concurrency: int, conversations: int, duration_s: float, steady_s: float) -> Any:
    return cell_summary(
        label="baseline",
        workload="w",
        dataset="mt-bench",
        concurrency=concurrency,
        gpus=1,
        num_requests=conversations,
        duration_s=duration_s,
        steady_state_duration_s=steady_s,
    )


def cell(concurrency: int) -> Cell:
    return Cell("baseline", 0, "w", "mt-bench", concurrency, 0)


def test_one_slot_three_conversations_of_two_seconds_price_180_at_360_s():
    # At c = 1 the steady-state window is the whole window: every conversation ends in it
    # (n − c + 1 = n), so three 2-second conversations give 0.5 conversations/s exactly.
    point = _point(summary(1, 3, 6.0, 6.0), {"baseline/w/c1/r0": 7.5})
    assert point is not None
    assert point.rate == pytest.approx(0.5)
    assert point.tail_s == 0 and point.overhead_s == pytest.approx(1.5)
    estimate = _cell_estimate(cell(1), [point], 180, None, gpus=8)
    assert estimate.wall_s == pytest.approx(180 * 2.0 + 1.5)
    assert estimate.gpu_hours == pytest.approx(361.5 * 8 / 3600)
    assert estimate.how == "measured"


def test_a_cell_priced_at_its_own_size_takes_its_own_wall_time():
    # c = 16, 48 conversations: 33 end inside the 4 s steady state, then a 1 s drain tail.
    point = _point(summary(16, 48, 5.0, 4.0), {"baseline/w/c16/r0": 5.25})
    assert point is not None
    assert point.rate == pytest.approx(33 / 4.0)
    assert _cell_estimate(cell(16), [point], 48, None, gpus=1).wall_s == pytest.approx(5.25)
    # 480 conversations: 465 ends at the same rate, the same tail and overhead.
    wide = _cell_estimate(cell(16), [point], 480, None, gpus=1)
    assert wide.wall_s == pytest.approx(465 / (33 / 4.0) + 1.0 + 0.25)
    # A precision-targeted campaign cell priced from an untargeted pilot: an upper bound.
    assert "upper bound" in _cell_estimate(cell(16), [point], 480, 0.02, gpus=1).how


def test_each_launch_pays_its_own_server_start(tmp_path: Path) -> None:
    suite = load_suite(SUITE)
    relaunched = suite.model_copy(update={"launches": 3})
    plan = plan_suite(relaunched, RunOptions(output=tmp_path, servers=("baseline",)))
    starts = server_starts(plan)
    assert starts["baseline"] == 3 and set(starts.values()) == {3, 0}  # others not selected
    point = _point(summary(1, 3, 6.0, 6.0), {})
    assert point is not None
    walls = [_cell_estimate(c, [point], 3, None, gpus=1) for c in plan.cells]
    estimate = Estimate(walls, {"baseline": 20.0}, {"baseline": 1}, starts)
    cells_s = sum(e.wall_s for e in walls)
    assert estimate.server_wall_s("baseline") == pytest.approx(3 * 20.0 + cells_s)
    assert "start 20.0 s × 3 launches" in describe_estimate(estimate)
    # One launch: one start, and the line as before.
    once = Estimate(walls, {"baseline": 20.0}, {"baseline": 1}, {"baseline": 1})
    assert once.server_wall_s("baseline") == pytest.approx(20.0 + cells_s)
    assert "start 20.0 s, total" in describe_estimate(once)


def test_precision_prices_three_launches_and_the_cap_bounds_the_rest(tmp_path: Path) -> None:
    suite = load_suite(SUITE)
    workload = suite.workloads[0].model_copy(update={"precision": 0.02})
    targeted = suite.model_copy(update={"workloads": [workload], "max_launches": 5})
    plan = plan_suite(targeted, RunOptions(output=tmp_path, servers=("baseline",)))
    starts = server_starts(plan)
    assert starts["baseline"] == 3  # the three launches precision measures at least
    point = _point(summary(1, 3, 6.0, 6.0), {})
    assert point is not None
    walls = [_cell_estimate(c, [point], 3, None, gpus=1) for c in plan.cells]
    assert len(walls) == 3 * 3  # three concurrencies × three launches
    bound = cap_bound(plan, walls, {"baseline": 20.0}, starts)
    assert bound is not None
    assert (bound.points, bound.minimum, bound.caps) == (3, 3, (5,))
    # Up to two more launches of each point, each as its planned launches' mean, and two
    # more server starts.
    cells_s = sum(e.wall_s for e in walls)
    assert bound.wall_s == pytest.approx(cells_s * 2 / 3 + 2 * 20.0)
    assert plan.servers["baseline"].gpus == 1
    assert bound.gpu_hours == pytest.approx(bound.wall_s / 3600)
    gpus: dict[str, int | None] = {"baseline": 1}
    estimate = Estimate(walls, {"baseline": 20.0}, gpus, starts, bound)
    text = describe_estimate(estimate)
    assert "start 20.0 s × 3 launches" in text
    assert text.splitlines()[-1].startswith(
        "  precision over launches: priced at the 3 launches each of the 3 precision-targeted "
        "points measures at least; more are added until each figure is known to its target, "
        f"up to the cap (max_launches = 5): at most +{bound.wall_s:.1f} s"
    )
    # Without a precision target there is no bound to print.
    assert cap_bound(plan_suite(suite, RunOptions(output=tmp_path)), walls, {}, {}) is None


def test_a_bound_counts_the_launches_already_measured_as_planned(tmp_path: Path) -> None:
    # Launches 0 and 1 of each targeted point are complete; only launch 2 is to measure.
    suite = load_suite(SUITE)
    workload = suite.workloads[0].model_copy(update={"precision": 0.02})
    targeted = suite.model_copy(update={"workloads": [workload], "max_launches": 5})
    plan = plan_suite(targeted, RunOptions(output=tmp_path, servers=("baseline",)))
    point = _point(summary(1, 3, 6.0, 6.0), {})
    assert point is not None
    to_measure = [c for c in plan.cells if c.launch == 2]
    walls = [_cell_estimate(c, [point], 3, None, gpus=1) for c in to_measure]
    assert len(walls) == 3
    assert server_starts(plan, to_measure)["baseline"] == 1  # one start, not three
    bound = cap_bound(plan, walls, {"baseline": 20.0}, server_starts(plan))
    assert bound is not None
    # Each point: 5 − 3 more launches at most (not 5 − 1), each as launch 2's wall; and
    # 5 − 3 more server starts.
    assert bound.wall_s == pytest.approx(2 * sum(e.wall_s for e in walls) + 2 * 20.0)


def test_cells_no_source_prices_are_named_and_left_out_of_the_total() -> None:
    point = _point(summary(1, 3, 6.0, 6.0), {})
    assert point is not None
    priced = _cell_estimate(cell(1), [point], 3, None, gpus=1)
    why = "no earlier cell of server eagle3 on workload w"
    other = Cell("eagle3", 0, "w", "mt-bench", 4, 0)
    gpus: dict[str, int | None] = {"baseline": 1, "eagle3": 1}
    starting = {"baseline": 20.0, "eagle3": 30.0}
    starts = {"baseline": 1, "eagle3": 0}  # as estimate_plan counts them: priced cells' starts
    both = Estimate([priced], starting, gpus, starts, unpriced=((other, why),))
    lines = describe_estimate(both).splitlines()
    assert lines[1:] == [
        f"  baseline/w/c1/r0: 3 conversations, {priced.wall_s:.1f} s, "
        f"{priced.gpu_hours:.4f} GPU-h (measured)",
        f"  eagle3/w/c4/r0: not priced ({why})",
        f"  server baseline: start 20.0 s, total {20.0 + priced.wall_s:.1f} s, "
        f"{(20.0 + priced.wall_s) / 3600:.4f} GPU-h (1 GPU)",
        f"  total: {20.0 + priced.wall_s:.1f} s, {(20.0 + priced.wall_s) / 3600:.4f} GPU-h",
        "  the total holds the 1 cells priced, not the 1 not priced (`specbench estimate "
        "SUITE --from DIR` with earlier results of their servers, or `--pilot`, prices them)",
    ]
    none_priced = Estimate([], starting, gpus, starts, unpriced=((other, why),))
    assert describe_estimate(none_priced, "earlier results in out") == (
        f"cost: cannot estimate the 1 cells to measure from earlier results in out: {why} "
        "(`specbench estimate SUITE --from DIR` fits earlier results of them; `--pilot` "
        "measures a few conversations)"
    )
    nothing = Estimate([], starting, gpus, {"baseline": 0, "eagle3": 0})
    assert describe_estimate(nothing).splitlines()[1:] == [
        "  total: 0.0 s, 0.0000 GPU-h",
        "  nothing to measure: every selected cell is complete",
    ]
