"""Precision over launches: the decision read from hand-made summaries on disk."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from analysis_fixtures import summary, write_launch_cell

from specbench.common.errors import SpecbenchError
from specbench.run.launch_rounds import (
    CAP_REACHED,
    PRECISION_REACHED,
    decide,
    describe,
    disagree,
    next_cells,
    relative_half_width,
    targeted_points,
)
from specbench.run.plan import Plan, RunOptions, plan_suite, suite_hash
from specbench.store.failure import FailureRecord, write_failure
from specbench.store.summary import CellErrors
from specbench.suite import load_suite

from .pilot_resume_suites import suite_text

#: t(0.975, 2) = 4.3027: three launch values 0.5 apart around 100 give ±1.24%, 4 apart ±9.9%.
T2 = 4.302652729911275


def plan(tmp_path: Path, *, top: str = "max_launches = 4\n", repeats: int = 1) -> Plan:
    path = tmp_path / "suite.toml"
    workloads = f"""[[workloads]]
dataset = "mt-bench"
concurrency = [4, 16]
max_tokens = 64
precision = 0.02
full_set_concurrency = 16
repeats = {repeats}
"""
    path.write_text(suite_text("rounds", workloads, top=top))
    return plan_suite(load_suite(path), RunOptions(output=tmp_path / "results"))


def measured(
    root: Path,
    server: str,
    tok_s: list[float],
    *,
    repeat: int = 0,
    c: int = 4,
    ttft_ms: list[float] | None = None,
    ttft_se: float | None = None,
) -> None:
    """Launch L of `server`'s point at `c` measured tok_s[L] tok/s/GPU and ttft_ms[L] median
    TTFT (100 ms when not given; other figures equal), with a stored bootstrap error of
    `ttft_se` ms on TTFT when given."""
    for launch, value in enumerate(tok_s):
        errors = (
            None
            if ttft_se is None
            else CellErrors(
                num_conversations=64, resamples=400, seed=0, figures={"ttft_ms_median": ttft_se}
            )
        )
        write_launch_cell(
            root,
            summary(
                label=server,
                dataset="mt-bench",
                workload="mt-bench",
                concurrency=c,
                repeat=repeat,
                tok_s_per_gpu=value,
                ttft_ms=ttft_ms[launch] if ttft_ms else 100.0,
                launch=launch,
                standard_errors=errors,
            ),
        )


def test_precision_plans_three_launches_of_each_targeted_point_and_one_of_the_full_set(
    tmp_path: Path,
) -> None:
    campaign = plan(tmp_path)
    assert [c.key for c in campaign.cells if c.server == "baseline"] == [
        "baseline/mt-bench/c4/r0",
        "baseline/mt-bench/c16/r0",
        "baseline/mt-bench/c4/l1/r0",
        "baseline/mt-bench/c4/l2/r0",
    ]
    assert [p.key for p in targeted_points(campaign)] == [
        "baseline/mt-bench/c4",
        "eagle3/mt-bench/c4",
    ]
    # The cap, like launches, stays out of the hash: a campaign may grow.
    assert suite_hash(campaign.suite) == suite_hash(plan(tmp_path, top="").suite)  # type: ignore[arg-type]


def test_three_launches_within_two_percent_stop_with_the_precision_reached(tmp_path: Path) -> None:
    campaign = plan(tmp_path)
    root = tmp_path / "results"
    measured(root, "baseline", [100.0, 100.5, 99.5])
    measured(root, "eagle3", [150.0, 151.0, 149.0])
    decisions = decide(campaign, root)
    assert [(d.point.key, d.launches_used, d.reason) for d in decisions] == [
        ("baseline/mt-bench/c4", 3, PRECISION_REACHED),
        ("eagle3/mt-bench/c4", 3, PRECISION_REACHED),
    ]
    base = decisions[0].half_widths
    assert base["output_tok_s_per_gpu"] == pytest.approx(T2 * 0.5 / math.sqrt(3) / 100.0)
    assert base["output_tok_s_per_gpu"] == pytest.approx(0.012421, abs=1e-6)
    assert base["e2e_ms_median"] == base["ttft_ms_median"] == 0.0  # equal in every launch
    assert next_cells(campaign, decisions) == []
    line = describe(decisions)
    assert line == "precision 2% over launches: 2 of 2 points precision reached in 3 launches"


def test_three_wide_launches_ask_for_a_fourth_of_that_point_only(tmp_path: Path) -> None:
    campaign = plan(tmp_path)
    root = tmp_path / "results"
    measured(root, "baseline", [100.0, 100.5, 99.5])
    measured(root, "eagle3", [150.0, 156.0, 144.0])
    decisions = decide(campaign, root)
    wide = decisions[1]
    assert (wide.reason, wide.next_launch) == (None, 3)
    assert wide.half_widths["output_tok_s_per_gpu"] == pytest.approx(T2 * 6 / math.sqrt(3) / 150)
    assert [c.key for c in next_cells(campaign, decisions)] == ["eagle3/mt-bench/c4/l3/r0"]
    assert "1 not finished" in (describe(decisions) or "")


def test_at_the_cap_without_the_precision_the_point_stops_with_cap_reached(tmp_path: Path) -> None:
    campaign = plan(tmp_path)
    root = tmp_path / "results"
    measured(root, "baseline", [100.0, 100.5, 99.5])
    measured(root, "eagle3", [150.0, 156.0, 144.0, 150.0])
    decisions = decide(campaign, root)
    capped = decisions[1]
    assert (capped.launches_used, capped.cap, capped.reason) == (4, 4, CAP_REACHED)
    # Four values 150, 156, 144, 150: sd √24, t(0.975, 3) = 3.1824.
    width = 3.182446305284263 * math.sqrt(24) / 2 / 150
    assert capped.half_widths["output_tok_s_per_gpu"] == pytest.approx(width)
    assert next_cells(campaign, decisions) == []
    assert describe(decisions) == (
        "precision 2% over launches: 1 of 2 points precision reached in 3 launches; "
        f"1 cap reached without it (eagle3/mt-bench/c4: 4 launches, "
        f"output_tok_s_per_gpu ±{width:.1%})"
    )


def test_precision_reached_at_the_cap_says_reached(tmp_path: Path) -> None:
    campaign = plan(tmp_path)
    root = tmp_path / "results"
    measured(root, "baseline", [100.0, 100.5, 99.5])
    measured(root, "eagle3", [150.0, 150.5, 149.5, 150.0])
    assert [d.reason for d in decide(campaign, root)] == [PRECISION_REACHED] * 2


def test_a_rerun_continues_the_launch_it_stopped_in_and_decides_the_same(tmp_path: Path) -> None:
    campaign = plan(tmp_path, repeats=2)
    root = tmp_path / "results"
    for server, values in (("baseline", [100.0, 104.0, 96.0]), ("eagle3", [150.0, 150.5, 149.5])):
        measured(root, server, values, repeat=0)
        measured(root, server, values, repeat=1)
    # Ctrl-C in launch 3 of the baseline: its r0 is saved, its r1 was in flight.
    measured(root, "baseline", [100.0, 104.0, 96.0, 100.0], repeat=0)
    first, again = decide(campaign, root), decide(campaign, root)
    assert first == again
    assert (first[0].launches_used, first[0].next_launch) == (3, 3)
    assert [c.key for c in next_cells(campaign, first)] == [
        "baseline/mt-bench/c4/l3/r0",  # complete: the orchestrator skips it
        "baseline/mt-bench/c4/l3/r1",
    ]
    assert first[1].reason == PRECISION_REACHED


def test_a_forced_run_counts_only_the_launches_it_measured(tmp_path: Path) -> None:
    campaign = plan(tmp_path)
    root = tmp_path / "results"
    measured(root, "baseline", [100.0, 100.5, 99.5, 100.0])
    measured(root, "eagle3", [150.0, 150.5, 149.5])
    # --force measured the three planned launches again; the fourth on disk is the old run's.
    this_run = [c for c in campaign.cells if c.launch < 3]
    base = decide(campaign, root, only=this_run)[0]
    assert (base.launches_used, base.reason) == (3, PRECISION_REACHED)
    wide = tmp_path / "wide"
    measured(wide, "baseline", [100.0, 104.0, 96.0, 100.0])
    measured(wide, "eagle3", [150.0, 150.5, 149.5])
    forced = decide(campaign, wide, only=this_run)[0]
    assert (forced.launches_used, forced.next_launch) == (3, 3)  # measured again
    assert decide(campaign, wide)[0].launches_used == 4  # a resume counts it


def test_a_failed_cell_uses_its_launch_and_leaves_it_no_value(tmp_path: Path) -> None:
    campaign = plan(tmp_path)
    root = tmp_path / "results"
    measured(root, "baseline", [100.0, 100.5, 99.5])
    measured(root, "eagle3", [150.0, 150.5])
    failed = root / "eagle3" / "mt-bench" / "c4" / "l2" / "r0"
    write_failure(failed, FailureRecord(error_type="ServerError", message="died", at="now"))
    decision = decide(campaign, root)[1]
    assert (decision.launches_used, decision.next_launch) == (3, 3)
    # Two launch values: t(0.975, 1) = 12.706 makes ±2.1% of 0.5 apart: not yet.
    assert decision.half_widths["output_tok_s_per_gpu"] == pytest.approx(
        12.706204736174707 * (0.5 / math.sqrt(2)) / math.sqrt(2) / 150.25
    )


def test_the_last_line_names_the_target_as_set(tmp_path: Path) -> None:
    campaign = plan(tmp_path)
    measured(tmp_path / "results", "baseline", [100.0, 100.5, 99.5])
    decisions = decide(campaign, tmp_path / "results")
    for target, shown in ((0.07, "7%"), (0.025, "0.025"), (0.0001, "0.0001")):
        moved = [replace(d, target=target) for d in decisions]
        assert (describe(moved) or "").startswith(f"precision {shown} over launches: ")


def test_the_launch_level_half_width_is_student_t_over_launch_values() -> None:
    assert relative_half_width([100.0]) is None
    assert relative_half_width([100.0, 100.5, 99.5]) == pytest.approx(T2 * 0.5 / math.sqrt(3) / 100)
    assert relative_half_width([-1.0, 1.0]) == math.inf


@pytest.mark.parametrize(
    ("top", "workload", "message"),
    [
        (
            "max_launches = 2\n",
            "",
            "max_launches: must be at least 3: precision needs at least 3 launches (got 2)",
        ),
        ("max_launches = 4.5\n", "", "max_launches: Input should be a valid integer"),
        ("", "max_launches = 1\n", "workloads[0].max_launches: must be at least 3"),
        ("launches = 5\nmax_launches = 4\n", "", "launches = 5 is above max_launches = 4"),
    ],
)
def test_a_cap_that_cannot_be_is_one_line_naming_the_field(
    tmp_path: Path, top: str, workload: str, message: str
) -> None:
    path = tmp_path / "suite.toml"
    workloads = f"""[[workloads]]
dataset = "mt-bench"
concurrency = [4]
max_tokens = 64
precision = 0.02
{workload}"""
    path.write_text(suite_text("bad", workloads, top=top))
    with pytest.raises(SpecbenchError) as error:
        load_suite(path)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_an_attached_server_keeps_one_launch_and_no_rounds(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(
        suite_text(
            "attached",
            '[[workloads]]\ndataset = "mt-bench"\nconcurrency = [4]\nmax_tokens = 64\n'
            "precision = 0.02\n",
        )
    )
    options = RunOptions(output=tmp_path / "r", endpoints={"eagle3": "http://127.0.0.1:9"})
    attached = plan_suite(load_suite(path), options)
    assert [c.key for c in attached.cells] == [
        "baseline/mt-bench/c4/r0",
        "eagle3/mt-bench/c4/r0",
        "baseline/mt-bench/c4/l1/r0",
        "baseline/mt-bench/c4/l2/r0",
    ]
    assert [p.key for p in targeted_points(attached)] == ["baseline/mt-bench/c4"]


def test_launches_whose_intervals_do_not_overlap_are_flagged_as_a_regime(tmp_path: Path) -> None:
    campaign = plan(tmp_path)
    root = tmp_path / "results"
    # TTFT 100, 101, 104 ms, each ±1.96 ms (se 1.0): launches 0 and 2 are 4 ms apart, more
    # than 1.96 × (1 + 1) = 3.92, so their intervals do not overlap.
    measured(root, "baseline", [100.0, 100.5, 99.5], ttft_ms=[100.0, 101.0, 104.0], ttft_se=1.0)
    # eagle3: 100, 101, 102 with the same errors: every pair overlaps (|Δ| ≤ 2 < 3.92).
    measured(root, "eagle3", [150.0, 150.5, 149.5], ttft_ms=[100.0, 101.0, 102.0], ttft_se=1.0)
    base, spec = decide(campaign, root)
    assert base.regimes == ("ttft_ms_median",)
    assert spec.regimes == ()
    assert base.record().regimes == ["ttft_ms_median"]
    # Without within-launch errors nothing is flagged: no interval to disagree with.
    other = tmp_path / "other"
    other.mkdir()
    bare = plan(other)
    measured(other / "results", "baseline", [100.0, 100.5, 99.5], ttft_ms=[100.0, 101.0, 104.0])
    assert decide(bare, other / "results")[0].regimes == ()


def test_two_launches_disagree_when_their_intervals_do_not_overlap() -> None:
    assert disagree([1.0, 5.0], [1.0, 1.0])
    assert not disagree([1.0, 4.9], [1.0, 1.0])  # |Δ| = 3.9 ≤ 1.96 × 2
    assert not disagree([1.0, 50.0], [None, 1.0])
