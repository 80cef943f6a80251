"""The emulator's settings table: each row is an `EmulatorConfig` field and, where it says
so, a CLI option and a key of a suite's `[emulator]` table."""

from __future__ import annotations

import os
from dataclasses import fields

from harness import run_cli

from specbench.common.emulator_settings import OPTIONS, ROWS, declared
from specbench.emulator import make_emulator_config
from specbench.emulator.config import EmulatorConfig
from specbench.launch import EmulatorOverrides


def test_every_option_is_a_config_field_with_its_default_and_help() -> None:
    rows = {row.name: row for row in fields(EmulatorConfig)}
    for option in OPTIONS:
        assert option.name in rows, option.name
        assert rows[option.name].default == option.default, option.name
        assert declared(rows[option.name]).help == option.help, option.name


def test_the_derived_option_lists_keep_the_ones_written_by_hand_before() -> None:
    # As main 408c852 declared them (emulator/options.py, launch/config.py), in that order:
    # the emulate options and the suite's keys; a setting added since may join them.
    before = [
        "port", "host", "model", "num_speculative_tokens", "prefill_ms", "step_ms",
        "per_request_step_ms", "max_model_len", "seed", "corrupt_rate",
        "per_request_spec_metrics", "continuous_usage_stats", "dev_mode", "prompt_log",
        "reasoning_tokens", "reasoning_output", "acceptance_decay", "acceptance_decay_tokens",
    ]  # fmt: skip
    assert [option.name for option in OPTIONS if option.name in before] == before
    before = [
        "acceptance", "prefill_ms", "step_ms", "per_request_step_ms", "seed", "corrupt_rate",
        "prompt_log", "per_step_spec_metrics", "reasoning_tokens", "reasoning_acceptance",
        "reasoning_output", "acceptance_decay", "acceptance_decay_tokens",
    ]  # fmt: skip
    assert [name for name in EmulatorOverrides.model_fields if name in before] == before
    assert declared(next(row for row in ROWS if row.name == "prompt_log")).hash_neutral


def test_a_setting_is_bounded_alike_in_a_suite_and_in_the_emulator() -> None:
    for row in ROWS:
        if declared(row).suite:
            info = EmulatorOverrides.model_fields[row.name]
            assert {type(bound).__name__.lower(): bound for bound in info.metadata}.keys() == (
                declared(row).bounds.keys()
            ), row.name
    assert make_emulator_config(step_ms=600_000).step_ms == 600_000.0


def test_emulate_help_lists_every_option_once_and_the_cli_parsed_ones() -> None:
    result = run_cli("emulate", "--help", env={**os.environ, "COLUMNS": "250"})
    assert result.returncode == 0, result.stderr
    shown = result.stdout
    flags = [f"--{option.name.replace('_', '-')}" for option in OPTIONS]
    flags += ["--acceptance", "--no-spec", "--reasoning-acceptance"]
    flags += ["--num-speculative-tokens-per-batch-size"]
    flags += ["--per-request-spec-decode-metrics"]
    for flag in flags:
        assert f" {flag} " in shown, flag
    assert "[required]" in shown.split("--port", 1)[1].splitlines()[0]
    assert "env var: VLLM_SERVER_DEV_MODE" in shown
