"""The emitted schedule (advise/schedule.py): ranges placed at measured batches."""

from __future__ import annotations

import pytest

from specbench.advise.schedule import TAIL_END, SchedulePoint, emit_schedule, ranges_for
from specbench.common.k_schedule import check_schedule

EAGLE = {"method": "eagle3", "model": "draft", "num_speculative_tokens": 1}


def test_ranges_change_at_the_geometric_midpoint_and_merge_equal_ks() -> None:
    # Batches 1.0 and 3.9 both want K 6 (merged); √(3.9·15.2) = 7.7 → K 3 from 8;
    # √(15.2·58.1) = 29.7 → K 0 from 30, to the tail.
    placed = [(1.0, 6), (3.9, 6), (15.2, 3), (58.1, 0)]
    assert ranges_for(placed) == ((1, 7, 6), (8, 29, 3), (30, TAIL_END, 0))


def test_close_batches_still_give_valid_ranges() -> None:
    # 1.2 and 1.9 share the floor 1: the second range starts right after the first.
    ranges = ranges_for([(1.2, 4), (1.9, 2), (2.5, 1)])
    assert check_schedule([list(r) for r in ranges]) == ranges
    assert ranges[0] == (1, 1, 4) and ranges[-1][2] == 1 and ranges[-1][1] == TAIL_END


def test_the_schedule_object_is_ready_to_paste() -> None:
    points = [SchedulePoint(1, 5, 1.0), SchedulePoint(16, 2, 14.6), SchedulePoint(64, 0, 60.2)]
    emitted = emit_schedule(points, EAGLE)
    assert emitted is not None and emitted.mapped_on == "running_batch"
    assert emitted.speculative_config == {
        "method": "eagle3",
        "model": "draft",
        "num_speculative_tokens": 5,
        "num_speculative_tokens_per_batch_size": [[1, 3, 5], [4, 29, 2], [30, TAIL_END, 0]],
    }
    assert any("K = 0 is not the baseline" in c for c in emitted.caveats)


def test_without_a_measured_batch_the_concurrency_stands_in_and_says_so() -> None:
    emitted = emit_schedule([SchedulePoint(1, 3, None), SchedulePoint(8, 1, 7.5)], EAGLE)
    assert emitted is not None and emitted.mapped_on == "concurrency"
    assert emitted.ranges == ((1, 2, 3), (3, TAIL_END, 1))  # √8 = 2.83


def test_no_schedule_when_the_baseline_wins_everywhere() -> None:
    assert emit_schedule([SchedulePoint(1, 0, 1.0), SchedulePoint(8, 0, 7.9)], EAGLE) is None
    assert emit_schedule([], EAGLE) is None


@pytest.mark.parametrize("method", ["suffix", "medusa", "ngram_gpu"])
def test_methods_that_crash_under_a_schedule_get_none(method: str) -> None:
    with pytest.raises(ValueError, match=f"method '{method}' crashes under a schedule"):
        emit_schedule([SchedulePoint(1, 2, 1.0)], {**EAGLE, "method": method})
