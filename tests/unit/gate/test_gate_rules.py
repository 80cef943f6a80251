"""gate.toml: defaults, overrides, and one-line errors that name the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.gate.rules import DEFAULT_RULES, GateRules, load_rules

REPO = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gate.toml"
    path.write_text(text)
    return path


def test_defaults_are_the_issue_s():
    rules = load_rules(None).effective()
    assert list(rules) == [
        "acceptance_length",
        "official_acceptance_length",
        "per_position_acceptance",
        "category_acceptance_length",
        "output_tok_s_per_gpu",
        "ttft_ms_median",
        "e2e_ms_median",
        "interactivity_tok_s_per_user",
        "num_failed",
    ]
    assert rules["acceptance_length"].describe() == "-2%"
    assert rules["output_tok_s_per_gpu"].describe() == "-5%"
    assert rules["ttft_ms_median"].describe() == "+10%"
    assert rules["num_failed"].describe() == "max 0" and rules["num_failed"].noise is False
    assert load_rules(None).noise_sigmas == 2.0
    assert load_rules(None).significance == 0.05 and load_rules(None).power == 0.8


def test_a_file_rule_replaces_its_default_adds_new_ones_and_can_disable(tmp_path):
    rules = load_rules(
        write(
            tmp_path,
            """
noise_sigmas = 3
[metrics.acceptance_length]
direction = "higher"
absolute = 0.05
[metrics.tpot_ms_median]
direction = "lower"
spread = 3
[metrics.ttft_ms_median]
direction = "lower"
relative = 0.1
enabled = false
""",
        )
    )
    effective = rules.effective()
    assert effective["acceptance_length"].describe() == "-0.05"
    assert effective["tpot_ms_median"].describe() == "+3σ(base)"
    assert "ttft_ms_median" not in effective
    assert effective["num_failed"] == DEFAULT_RULES["num_failed"]
    assert rules.noise_sigmas == 3


def test_replace_defaults_keeps_only_the_file_s_rules(tmp_path):
    path = write(
        tmp_path,
        'replace_defaults = true\n[metrics.num_failed]\ndirection = "lower"\nmax = 2\n',
    )
    assert list(load_rules(path).effective()) == ["num_failed"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[metrics.acceptance_length]\ndirection = "higher"\nrelative = 0.02\nabsolute = 0.1\n',
            "metrics.acceptance_length: give exactly one of relative, absolute, spread, max "
            "(got relative, absolute)",
        ),
        (
            '[metrics.acceptance_length]\ndirection = "up"\nrelative = 0.02\n',
            "metrics.acceptance_length.direction: 'up' is not allowed; "
            "allowed: 'higher' or 'lower'",
        ),
        (
            '[metrics.acceptance_length]\ndirection = "higher"\nrelative = 0.02\ntolerance = 1\n',
            "metrics.acceptance_length.tolerance: unknown key; allowed: direction, relative",
        ),
        (
            '[metrics.output_tok_s_per_gpu]\ndirection = "higher"\nrelative = -0.05\n',
            "metrics.output_tok_s_per_gpu.relative: Input should be greater than or equal to 0",
        ),
        (
            '[metrics.output_tok_s_per_gpu]\ndirection = "higher"\nmax = 5\n',
            'metrics.output_tok_s_per_gpu: max is a ceiling: use it with direction = "lower"',
        ),
        (
            '[metrics.tok_per_s]\ndirection = "higher"\nrelative = 0.05\n',
            "unknown metric 'tok_per_s'",
        ),
        ("noise = 2\n", "noise: unknown key; allowed: significance, power, noise_sigmas"),
    ],
)
def test_bad_rules_name_the_file_and_the_field(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(SpecbenchError) as error:
        load_rules(path)
    assert str(error.value).startswith(f"{path}: ")
    assert message in str(error.value)


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(SpecbenchError, match=r"--rules .*nope.toml: no such file"):
        load_rules(tmp_path / "nope.toml")
    with pytest.raises(SpecbenchError, match=r"gate.toml: not valid TOML"):
        load_rules(write(tmp_path, "[metrics\n"))


def test_rules_model_is_frozen():
    rules = GateRules()
    with pytest.raises(ValueError):
        rules.noise_sigmas = 1.0  # type: ignore[misc]


def test_the_shipped_example_rules_file_loads():
    rules = load_rules(REPO / "docs" / "gate.example.toml")
    assert "acceptance_length" in rules.effective()


def test_the_example_file_spells_out_exactly_the_defaults():
    example = load_rules(REPO / "docs" / "gate.example.toml")
    assert example.effective() == GateRules().effective()
