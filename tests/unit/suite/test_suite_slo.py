"""A suite's `[slo]` table: read as written, recorded in the suite, never in its hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.advise.slo import slo_from_table
from specbench.common.errors import SpecbenchError
from specbench.run.plan import suite_hash
from specbench.suite import load_suite

SUITE = """\
name = "slo"
{top}
[target]
engine = "emulator"
model = "org/target"

[servers.base]
baseline = true

[[workloads]]
dataset = "mt-bench"
concurrency = [1, 4]
max_tokens = 16
"""


def suite_file(tmp_path: Path, top: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(top=top))
    return path


def test_the_slo_table_is_read_and_stays_out_of_the_hash(tmp_path: Path) -> None:
    plain = load_suite(suite_file(tmp_path, ""))
    bounded = load_suite(suite_file(tmp_path, '[slo]\ntpot_p90 = "50ms"\nttft_p90 = "2s"\n'))
    assert plain.slo == {}
    assert bounded.slo == {"tpot_p90": "50ms", "ttft_p90": "2s"}
    assert suite_hash(bounded) == suite_hash(plain)
    slo = slo_from_table(bounded.slo, "suite.toml: slo")
    assert slo.describe() == "tpot_p90 ≤ 50ms, ttft_p90 ≤ 2s"


def test_an_slo_that_is_not_a_table_is_refused_naming_the_field(tmp_path: Path) -> None:
    path = suite_file(tmp_path, 'slo = "tpot_p90=50ms"\n')
    with pytest.raises(SpecbenchError, match=r"suite.toml: slo"):
        load_suite(path)


def test_run_refuses_a_bad_slo_before_anything_starts(tmp_path: Path) -> None:
    from harness import run_cli

    path = suite_file(tmp_path, '[slo]\ntpot_p90 = "50"\n')
    result = run_cli("run", path, "--dry-run")
    assert result.returncode == 2
    assert f"{path}: slo: tpot_p90=50 has no unit; allowed units: ms, s" in result.stderr
    assert "Traceback" not in result.stderr
