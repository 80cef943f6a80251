"""A suite's `[emulator]` table: the emulator's settings, bounded as the emulator bounds them."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
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
