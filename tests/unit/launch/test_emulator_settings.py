"""A suite's `[emulator]` table: the emulator's settings, bounded as the emulator bounds them."""

from __future__ import annotations

from dataclasses import Field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from specbench.common.emulator_settings import ROWS, Setting
from specbench.common.errors import SpecbenchError
from specbench.launch import argv
from specbench.suite.load import load_suite

SUITE = """
name = "bounds"
[target]
model = "m"
engine = "emulator"
[servers.base]
baseline = true
emulator = {{ {setting} }}
[[workloads]]
dataset = "mt-bench"
concurrency = [1]
max_tokens = 8
"""


@pytest.mark.parametrize("name", ["prefill_ms", "step_ms", "per_request_step_ms"])
def test_a_step_time_the_emulator_refuses_is_refused_at_load(tmp_path: Path, name: str) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(setting=f"{name} = 600001"))
    with pytest.raises(SpecbenchError) as caught:
        load_suite(path)
    assert str(caught.value) == (
        f"{path}: servers.base.emulator.{name}: Input should be less than or equal to "
        "600000 (got 600001)"
    )
    path.write_text(SUITE.format(setting=f"{name} = 600000"))
    assert getattr(load_suite(path).servers["base"].emulator, name) == 600_000.0


def test_a_bool_setting_is_its_flag_or_no_flag_where_it_differs_from_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No bool setting a suite may set is written generically today: make dev_mode one.
    real = argv.declared

    def declared(row: Field[Any]) -> Setting:
        found = real(row)
        return replace(found, suite=True) if row.name == "dev_mode" else found

    monkeypatch.setattr(argv, "declared", declared)
    unset = {row.name: None for row in ROWS}
    for value, expected in ((True, ["--dev-mode"]), (False, []), (None, [])):
        settings = SimpleNamespace(**{**unset, "dev_mode": value, "seed": 4})
        written = argv._emulator_flags(settings, speculating=True)  # type: ignore[arg-type]
        assert written == ["--seed", "4", *expected]
    # True by default: written only when turned off.
    monkeypatch.setattr(
        argv,
        "declared",
        lambda row: replace(
            real(row), suite=row.name == "continuous_usage_stats" or real(row).suite
        ),
    )
    settings = SimpleNamespace(**{**unset, "continuous_usage_stats": False})
    assert argv._emulator_flags(settings, speculating=False) == [  # type: ignore[arg-type]
        "--no-continuous-usage-stats"
    ]
