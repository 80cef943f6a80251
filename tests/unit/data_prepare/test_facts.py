"""The facts found in NVIDIA's code, each pinned by a test on our resolvers."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.data.prepare import tokens
from specbench.data.prepare.context import Context
from specbench.data.prepare.families import adaleval
from specbench.data.prepare.registry import source_for
from specbench.data.prepare.resolve import load_speed_bench, resolve_rows
from specbench.data.prepare.upstream import Upstream
from specbench.data.speed_bench import DEFAULT_REVISION, PLACEHOLDER

from .conftest import MIRROR


def _rows(config: str) -> list[dict]:
    return [dict(row) for row in load_speed_bench(Upstream(MIRROR), config, DEFAULT_REVISION)]


def _resolve(config: str, rows: list[dict]) -> list[dict]:
    resolved, _ = resolve_rows(rows, Context(config=config, upstream=Upstream(MIRROR)))
    return resolved


def test_only_the_first_turn_is_checked_for_the_placeholder() -> None:
    row = {"question_id": "q" * 32, "turns": ["ordinary", PLACEHOLDER], "source": "nowhere"}
    assert _resolve("qualitative", [row])[0]["turns"] == ["ordinary", PLACEHOLDER]


def test_an_unknown_source_is_an_error_never_a_placeholder_left() -> None:
    row = {"question_id": "q" * 32, "turns": [PLACEHOLDER], "source": "someone/else"}
    with pytest.raises(
        SpecbenchError, match=r"source 'someone/else' is not a known SPEED-Bench source"
    ):
        _resolve("qualitative", [row])


def test_sources_match_by_substring_in_the_upstream_order() -> None:
    both = "https://example.org/RUCAIBox/BAMBOO/and/cais/hle"
    family = source_for(both)
    assert family is not None and family.match == "RUCAIBox/BAMBOO"
    roles = source_for("https://huggingface.co/datasets/ZenMoore/RoleBench/tree/x")
    assert roles is not None and roles.match == "ZenMoore/RoleBench"


def test_templates_go_through_str_format() -> None:
    by_src = {row["src_id"]: row for row in _resolve("qualitative", _rows("qualitative"))}
    german = by_src["opus100_de-en_3"]["turns"][0]
    assert german.startswith("Translate into English:\nde ")  # {question[de]} picks a key
    french = by_src["opus100_en-fr_0"]["turns"][0]
    assert "('fr " in french  # {question[fr]!r}
    cnn = [row for row in by_src.values() if row["source"] == "abisee/cnn_dailymail"]
    assert any("Write a {short} summary." in row["turns"][0] for row in cnn)  # {{ }} → { }


def test_a_cut_can_split_a_character_into_u_fffd() -> None:
    text = "🦜🦩🦚" * 20
    enc = tokens.encoder()
    cut = next(n for n in range(1, 60) if "\ufffd" in enc.decode(enc.encode(text)[:n]))
    assert tokens.fit(text, cut).endswith("\ufffd")
    assert tokens.count(tokens.fit("short", 40)) == 40  # padded with "Answer now please.\n"


def test_stackselect_tests_each_answer_against_the_budget_not_the_sum() -> None:
    from specbench.data.prepare import templates

    answers = ["alpha " * 30, "bravo " * 30, "charlie " * 30, "delta " * 30]
    head = templates.STACKSELECT_INTRO + "The question is given below.\nq\n\n"
    fixed = (
        tokens.count(head + "Possible answers are given below.\n")
        + tokens.count(templates.STACKSELECT_END)
        + tokens.count(f"A1:\n\n{answers[0]}\n\n")
    )
    others = [tokens.count(f"A{i + 1}:\n\n{a}\n\n") for i, a in enumerate(answers) if i]
    budget = fixed + max(others)
    assert fixed + sum(others) > budget  # all three together would not fit
    prompt = adaleval._stackselect_prompt("q", answers, "A1", budget)
    assert all(answer in prompt for answer in answers)  # yet each is tested alone, and fits
    assert "charlie" not in adaleval._stackselect_prompt("q", answers, "A1", budget - 60)
    # The same call twice gives the same order: `random` is seeded 42 inside each call.
    assert prompt == adaleval._stackselect_prompt("q", answers, "A1", budget)


def test_hle_throughput_text_depends_on_the_rows_before_it() -> None:
    rows = _rows("throughput_1k")
    hle = [row for row in rows if row["source"] == "cais/hle"]
    in_order = {row["question_id"]: row["turns"] for row in _resolve("throughput_1k", hle)}
    reversed_order = {
        row["question_id"]: row["turns"] for row in _resolve("throughput_1k", hle[::-1])
    }
    assert in_order.keys() == reversed_order.keys()
    assert in_order != reversed_order  # one generator per config, drawn in row order
    # A fresh generator per config: resolving again gives the same text.
    assert in_order == {row["question_id"]: row["turns"] for row in _resolve("throughput_1k", hle)}


def test_coser_lists_characters_in_the_order_datasets_reads_them(tmp_path: Path) -> None:
    by_src = {row["src_id"]: row for row in _resolve("qualitative", _rows("qualitative"))}
    scene = by_src["coser_2"]["turns"][0]
    # Row 2 names C, D, E; the merged struct holds A..E in first-seen order, A and B null.
    others = scene.split("===Information about the other Characters===\n")[1].split("\n===")[0]
    names = [line.split(":")[0] for line in others.split("\n\n")]
    assert names == sorted(names) and "Character A" not in names and len(names) == 2
