"""vLLM 0.32's K schedule (`num_speculative_tokens_per_batch_size`): its rules and lookup,
worked by hand from `vllm/v1/spec_decode/dynamic/utils.py`."""

from __future__ import annotations

import pytest

from specbench.common.k_schedule import check_schedule, k_for_batch, parse_schedule

SCHEDULE = ((1, 4, 5), (5, 16, 3), (17, 1024, 1))


@pytest.mark.parametrize(
    ("batch_size", "k"),
    [(1, 5), (4, 5), (5, 3), (16, 3), (17, 1), (1024, 1), (5000, 1)],
)
def test_each_batch_size_takes_its_ranges_k_and_the_tail_the_last(batch_size: int, k: int) -> None:
    assert k_for_batch(SCHEDULE, batch_size, 5) == k


def test_a_gap_repeats_the_previous_k() -> None:
    # vLLM's own example: [(1, 16, 3), (32, 128, 2)] maps 17-31 to K = 3.
    schedule = ((1, 16, 3), (32, 128, 2))
    assert [k_for_batch(schedule, n, 4) for n in (16, 17, 31, 32, 128, 129)] == [3, 3, 3, 2, 2, 2]


def test_each_k_is_clamped_to_the_maximum_and_zero_stays_zero() -> None:
    schedule = ((1, 2, 7), (3, 8, 0), (9, 9, 2))
    assert [k_for_batch(schedule, n, 4) for n in (1, 2, 3, 8, 9, 10)] == [4, 4, 0, 0, 2, 2]
    assert k_for_batch(schedule, 9, 1) == 1
    with pytest.raises(ValueError, match="batch size 0: at least 1"):
        k_for_batch(schedule, 0, 4)


def test_json_text_is_read_as_integer_triples() -> None:
    assert parse_schedule("[[1,4,5],[5,16,3],[17,1024,1]]") == SCHEDULE
    # A K above the maximum passes: vLLM clamps it rather than refusing it.
    assert parse_schedule("[[1, 1, 64]]") == ((1, 1, 64),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[2,4,5]]", "the first range [2, 4, 5] must start at 1"),
        ("[[0,4,5]]", "range [0, 4, 5]: start must be at least 1"),
        ("[[1,4,5],[3,8,2]]", "range [3, 8, 2] overlaps [1, 4, 5]"),
        ("[[5,16,3],[1,4,5]]", "range [1, 4, 5] comes after [5, 16, 3]: sort the ranges"),
        ("[[1,4,5],[9,6,2]]", "range [9, 6, 2]: start is after end"),
        ("[[1,4,-1]]", "range [1, 4, -1]: K must be 0 or more"),
        ("[[1,4]]", "range [1, 4] is not [start, end, K]"),
        ("[[1,4,2.5]]", "range [1, 4, 2.5]: start, end and K must be integers"),
        ("[[1,4,true]]", "range [1, 4, True]: start, end and K must be integers"),
        ("[]", "needs at least one range"),
        ("[1,4,5]", "'[1,4,5]': expected [[start, end, K], …]"),
        ("1-4:5", "'1-4:5' is not JSON"),
    ],
)
def test_a_schedule_that_breaks_a_rule_is_refused_naming_it(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_schedule(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_check_takes_the_ranges_a_suite_gives_as_lists() -> None:
    assert check_schedule([[1, 8, 4], [9, 64, 0]]) == ((1, 8, 4), (9, 64, 0))
