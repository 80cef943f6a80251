"""EmulatorConfig validation and the fake tokenizer/model rules."""

from __future__ import annotations

import pytest

from specbench.common.errors import SpecbenchError
from specbench.emulator import make_emulator_config, parse_acceptance
from specbench.emulator.config import default_acceptance
from specbench.emulator.tokens import (
    corrupted_token_id,
    corruption_start,
    count_prompt_tokens,
    encode,
    output_token_id,
    prompt_digest_of_text,
    render_chat,
)


def test_expected_acceptance_length_of_the_default_process() -> None:
    config = make_emulator_config(acceptance=(0.8, 0.75, 0.7))
    assert config.expected_acceptance_length == pytest.approx(
        1 + 0.8 + 0.8 * 0.75 + 0.8 * 0.75 * 0.7
    )
    assert config.expected_acceptance_length == pytest.approx(2.82)


def test_default_acceptance_extends_for_larger_k() -> None:
    assert default_acceptance(3) == (0.8, 0.75, 0.7)
    assert default_acceptance(5) == (0.8, 0.75, 0.7, 0.65, 0.6)
    assert default_acceptance(1) == (0.8,)
    assert make_emulator_config(num_speculative_tokens=2).conditional_acceptance == (0.8, 0.75)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("0.8,,0.7", "expected comma-separated"),
        ("0.8,abc,0.7", "'abc' is not a number"),
        ("", "expected"),
    ],
)
def test_parse_acceptance_rejects_garbage(text: str, fragment: str) -> None:
    with pytest.raises(SpecbenchError, match=fragment):
        parse_acceptance(text)


def test_acceptance_length_must_equal_k() -> None:
    with pytest.raises(SpecbenchError, match="2 values but --num-speculative-tokens is 3"):
        make_emulator_config(acceptance=(0.8, 0.7))


def test_acceptance_values_must_be_fractions() -> None:
    with pytest.raises(SpecbenchError, match=r"1.5 is outside \[0, 1\]"):
        make_emulator_config(acceptance=(0.8, 1.5, 0.7))


def test_corrupt_rate_error_names_the_flag() -> None:
    with pytest.raises(SpecbenchError, match="--corrupt-rate") as caught:
        make_emulator_config(corrupt_rate=1.5)
    assert "\n" not in str(caught.value)


def test_config_is_frozen_and_strict() -> None:
    with pytest.raises(SpecbenchError, match="unknown"):
        make_emulator_config(unknown=1)


def test_prompt_token_rules() -> None:
    assert count_prompt_tokens("hello there  world") == 4  # 3 words + BOS
    assert encode("hello there world")[0] == 1
    assert len(encode("hello there world")) == 4
    assert encode("a b") == encode("a   b")
    chat = render_chat([{"role": "user", "content": "hi you"}])
    # <|user|>, hi, you, <|assistant|> + BOS
    assert count_prompt_tokens(chat) == 5
    parts = render_chat([{"role": "user", "content": [{"type": "text", "text": "hi you"}]}])
    assert parts == chat


def test_output_ids_depend_only_on_prompt_and_position() -> None:
    key = prompt_digest_of_text("same prompt")
    first = [output_token_id(key, j) for j in range(50)]
    assert first == [output_token_id(key, j) for j in range(50)]
    other = [output_token_id(prompt_digest_of_text("other prompt"), j) for j in range(50)]
    assert first != other
    assert all(3 <= token < 32000 for token in first + other)
    assert len(set(first)) > 40


def test_corruption_fraction_and_effect() -> None:
    digests = [prompt_digest_of_text(f"prompt number {i}") for i in range(2000)]
    starts = [corruption_start(d, seed=7, rate=0.25, max_tokens=64) for d in digests]
    fraction = sum(start is not None for start in starts) / len(starts)
    assert 0.22 < fraction < 0.28
    assert all(0 <= start < 64 for start in starts if start is not None)
    assert corruption_start(digests[0], seed=7, rate=0.0, max_tokens=64) is None
    assert all(corruption_start(d, seed=7, rate=1.0, max_tokens=64) is not None for d in digests)
    assert corrupted_token_id(31999) == 3
    assert corrupted_token_id(100) == 101
