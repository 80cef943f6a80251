"""The emulator's option table: every row is an `EmulatorConfig` field and a CLI option."""

from __future__ import annotations

import os

from harness import run_cli

from specbench.emulator.config import EmulatorConfig
from specbench.emulator.options import OPTIONS


def test_every_option_is_a_config_field_with_its_default_and_help() -> None:
    fields = EmulatorConfig.model_fields
    for option in OPTIONS:
        assert option.name in fields, option.name
        assert fields[option.name].default == option.default, option.name
        assert fields[option.name].description == option.help, option.name


def test_emulate_help_lists_every_option_once_and_the_cli_parsed_ones() -> None:
    result = run_cli("emulate", "--help", env={**os.environ, "COLUMNS": "250"})
    assert result.returncode == 0, result.stderr
    shown = result.stdout
    flags = [f"--{option.name.replace('_', '-')}" for option in OPTIONS]
    flags += ["--acceptance", "--no-spec", "--reasoning-acceptance"]
    flags += ["--per-request-spec-decode-metrics"]
    for flag in flags:
        assert f" {flag} " in shown, flag
    assert "[required]" in shown.split("--port", 1)[1].splitlines()[0]
    assert "env var: VLLM_SERVER_DEV_MODE" in shown
