"""AmdSmiSource against a stand-in `amdsmi` module file: the library's call sequence, both
names of its accumulator, its "N/A" power and each way it fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from stand_ins import BROKEN_IMPORT, write_amdsmi

from specbench.energy.amdsmi_source import AmdSmiSource
from specbench.energy.reading import TelemetryUnavailable


@pytest.mark.parametrize("key", ["energy_accumulator", "power"])
def test_the_accumulator_times_its_resolution_is_micro_joules(library_dir: Path, key: str) -> None:
    # amdsmi 6.2.1 renamed the accumulator from `power` to `energy_accumulator`.
    write_amdsmi(
        library_dir,
        [{"energy": [1], "power": 1}, {"energy": [100_000_000, 100_065_360], "power": 745}],
        accumulator_key=key,
        resolution_uj=15.3,
    )
    source = AmdSmiSource(["1"])
    first, second = source.read(), source.read()
    source.close()
    source.close()
    assert list(first.gpus) == ["1"]
    assert first.gpus["1"].energy_j == pytest.approx(1530.0)  # 1e8 × 15.3 µJ
    assert second.gpus["1"].energy_j - first.gpus["1"].energy_j == pytest.approx(65_360 * 15.3e-6)
    assert second.gpus["1"].power_w == 745.0
    assert sys.modules["amdsmi"].CALLS == [
        "amdsmi_init",
        "amdsmi_get_processor_handles",
        "amdsmi_get_energy_count(1)",
        "amdsmi_get_power_info(1)",
        "amdsmi_get_energy_count(1)",
        "amdsmi_get_power_info(1)",
        "amdsmi_shut_down",  # once, though closed twice
    ]


def test_power_na_falls_back_to_the_average_then_to_none(library_dir: Path) -> None:
    write_amdsmi(
        library_dir,
        [{"energy": [10], "power": "N/A", "average": 512}, {"energy": [10], "power": "N/A"}],
    )
    source = AmdSmiSource(["0", "1"])
    reading = source.read()
    source.close()
    assert reading.gpus["0"].power_w == 512.0
    assert reading.gpus["1"].power_w is None
    assert reading.gpus["1"].energy_j == pytest.approx(10 * 15.3e-6)


def test_a_device_whose_energy_call_fails_reads_none(library_dir: Path) -> None:
    write_amdsmi(library_dir, [{"energy": "not_supported", "power": 600}])
    source = AmdSmiSource(["0"])
    reading = source.read()
    source.close()
    assert reading.gpus["0"].energy_j is None
    assert reading.gpus["0"].power_w == 600.0


def test_an_id_beyond_the_handles_is_no_device(library_dir: Path) -> None:
    write_amdsmi(library_dir, [{"energy": [1], "power": 1}] * 8)
    with pytest.raises(TelemetryUnavailable) as caught:
        AmdSmiSource(["7", "8"])
    assert caught.value.reason == "no_device"
    assert str(caught.value) == "amdsmi lists 8 GPU(s) (numbered 0-7); it has no GPU '8'"
    assert sys.modules["amdsmi"].CALLS[-1] == "amdsmi_shut_down"


def test_a_uuid_is_not_an_amdsmi_device(library_dir: Path) -> None:
    write_amdsmi(library_dir, [{"energy": [1], "power": 1}])
    with pytest.raises(TelemetryUnavailable) as caught:
        AmdSmiSource(["GPU-5a3c1d2e"])
    assert caught.value.reason == "no_device"
    assert "no GPU 'GPU-5a3c1d2e'" in str(caught.value)


def test_an_init_failure_is_unavailable(library_dir: Path) -> None:
    write_amdsmi(library_dir, [], init_error=True)
    with pytest.raises(TelemetryUnavailable) as caught:
        AmdSmiSource(["0"])
    assert caught.value.reason == "unavailable"
    assert "amdsmi did not initialise" in str(caught.value)
    assert "AMDSMI_STATUS_INIT_ERROR" in str(caught.value)
    assert sys.modules["amdsmi"].CALLS == ["amdsmi_init"]


def test_a_library_without_rocm_is_unavailable_and_says_how_to_install(library_dir: Path) -> None:
    (library_dir / "amdsmi.py").write_text(BROKEN_IMPORT)
    with pytest.raises(TelemetryUnavailable) as caught:
        AmdSmiSource(["0"])
    assert caught.value.reason == "unavailable"
    assert "amdsmi does not import (libamd_smi.so: cannot open shared object file" in str(
        caught.value
    )
    assert "specbench[amd]" in str(caught.value)
