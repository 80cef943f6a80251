"""The energy figures are declared once (issue 41): energy per output token is a serving
row only where measured, lower is better, and the gate watches it only when asked."""

from __future__ import annotations

from specbench.analysis import wording as W
from specbench.gate.rules import DEFAULT_RULES, GateRules
from specbench.metrics.declarations import JOULES_PER_OUTPUT_TOKEN, serving_rows, with_intervals
from specbench.metrics.directions import direction_of

NAME = JOULES_PER_OUTPUT_TOKEN.name


def test_energy_per_token_is_a_lower_is_better_row_after_the_cards_four() -> None:
    assert direction_of(NAME) == "lower"
    assert direction_of("output_tokens_per_joule") == "higher"
    rows = [f.name for f in serving_rows()]
    assert rows.index(NAME) == 4 and JOULES_PER_OUTPUT_TOKEN.only_where_measured
    assert NAME in with_intervals()
    assert JOULES_PER_OUTPUT_TOKEN.table is not None
    assert "GPU board" in JOULES_PER_OUTPUT_TOKEN.table.label


def test_the_gate_watches_energy_only_when_a_rules_file_asks() -> None:
    assert NAME not in DEFAULT_RULES
    rules = GateRules.model_validate({"metrics": {NAME: {"direction": "lower", "relative": 0.05}}})
    assert rules.effective()[NAME].relative == 0.05


def test_the_change_and_value_wording() -> None:
    assert W.percent_energy_change(0.1284, 0.1154) == "+11.3% energy"
    assert W.percent_energy_change(0.1818, 0.2512) == "−27.6% energy"
    assert W.percent_energy_change(float("nan"), 0.2) == "n/a"
    assert W.significant(0.080539, "J/token") == "0.0805 J/token"
    assert W.significant(12.4167, "tok/J") == "12.4 tok/J"
