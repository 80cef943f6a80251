"""Stratified, seeded selection: spread over categories, deterministic, honest about shortfalls."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from fixtures.make_fixtures import QUALITATIVE

from specbench.common.errors import SpecbenchError
from specbench.data.conversation import Conversation
from specbench.data.loader import load_workload
from specbench.data.selection import filter_categories, stratified_sample

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: The qualitative split's 11 categories, as the fixtures were made (tests/fixtures).
DOMAINS = list(QUALITATIVE)


def _dataset(per_category: int = 80) -> list[Conversation]:
    return [
        Conversation(question_id=f"{category}-{index}", category=category, turns=("hi",))
        for category in DOMAINS
        for index in range(per_category)
    ]


def test_64_prompts_spread_over_all_11_domains() -> None:
    selection = stratified_sample(_dataset(), 64, seed=0)
    counts = Counter(c.category for c in selection.conversations)
    assert sum(counts.values()) == 64
    assert set(counts) == set(DOMAINS)
    assert sorted(counts.values()) == [5, 5] + [6] * 9
    assert len({c.question_id for c in selection.conversations}) == 64
    assert selection.warnings == ()
    # Round-robin order: the first 11 rows are one of each domain.
    assert len({c.category for c in selection.conversations[:11]}) == 11


def test_same_seed_same_rows_and_order_other_seed_differs() -> None:
    first = stratified_sample(_dataset(), 64, seed=7).conversations
    again = stratified_sample(list(reversed(_dataset())), 64, seed=7).conversations
    other = stratified_sample(_dataset(), 64, seed=8).conversations
    assert [c.question_id for c in first] == [
        c.question_id for c in stratified_sample(_dataset(), 64, seed=7).conversations
    ]
    assert {c.question_id for c in first} == {c.question_id for c in again}
    assert [c.question_id for c in first] != [c.question_id for c in other]


def test_a_category_sample_does_not_depend_on_other_categories() -> None:
    everything = stratified_sample(_dataset(), 22, seed=3).conversations
    only_math = stratified_sample([c for c in _dataset() if c.category == "math"], 2, seed=3)
    math_rows = [c.question_id for c in everything if c.category == "math"]
    assert math_rows == [c.question_id for c in only_math.conversations]


def test_small_categories_run_out_and_others_fill_in() -> None:
    rows = _dataset(1) + [
        Conversation(question_id=f"qa-extra-{i}", category="qa", turns=("x",)) for i in range(20)
    ]
    selection = stratified_sample(rows, 20, seed=0)
    counts = Counter(c.category for c in selection.conversations)
    assert counts["qa"] == 10 and sum(counts.values()) == 20


def test_none_keeps_file_order_and_too_many_warns_or_fails() -> None:
    rows = _dataset(2)
    assert stratified_sample(rows, None).conversations == tuple(rows)
    assert stratified_sample(rows, 22).conversations == tuple(rows)
    loose = stratified_sample(rows, 30, where="d.jsonl")
    assert loose.conversations == tuple(rows)
    assert loose.warnings == (
        "d.jsonl: --num-prompts 30 exceeds the 22 rows available; using all 22",
    )
    with pytest.raises(SpecbenchError, match=r"d\.jsonl: --num-prompts 30 exceeds the 22 rows"):
        stratified_sample(rows, 30, strict=True, where="d.jsonl")
    with pytest.raises(SpecbenchError, match=r"--num-prompts must be at least 1, got 0"):
        stratified_sample(rows, 0)


def test_filter_categories_keeps_order_and_names_what_exists() -> None:
    rows = _dataset(2)
    kept = filter_categories(rows, ["qa", "math"], where="f")
    assert [c.question_id for c in kept] == ["math-0", "math-1", "qa-0", "qa-1"]
    with pytest.raises(SpecbenchError, match=r"f: unknown category 'poetry'; available: coding, "):
        filter_categories(rows, ["poetry"], where="f")


def test_load_workload_passes_selection_through_and_reports_warnings() -> None:
    spec = f"speed-bench:qualitative:{FIXTURES / 'speed_bench'}"
    workload = load_workload(spec, num_prompts=22, seed=5)
    assert Counter(c.category for c in workload.conversations) == Counter(
        {domain: 2 for domain in DOMAINS}
    )
    assert load_workload(spec, num_prompts=22, seed=5).conversations == workload.conversations
    big = load_workload(spec, num_prompts=100)
    assert len(big.conversations) == 44
    assert big.warnings[0].endswith("--num-prompts 100 exceeds the 44 rows available; using all 44")
    with pytest.raises(SpecbenchError, match=r"exceeds the 44 rows"):
        load_workload(spec, num_prompts=100, strict=True)
