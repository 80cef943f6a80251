"""NvmlSource against a stand-in `pynvml` module file: NVML's real call sequence, its units
(mJ, mW) and each way it fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from stand_ins import BROKEN_IMPORT, write_pynvml

from specbench.energy.nvml_source import NvmlSource
from specbench.energy.reading import TelemetryUnavailable

UUID = "GPU-5a3c1d2e-0f4b-4c6d-8e9f-0123456789ab"


def test_reads_counters_in_joules_and_power_in_watts(library_dir: Path) -> None:
    write_pynvml(
        library_dir,
        [
            {"energy": [1_000_000, 1_250_500], "power": 312_250},
            {"energy": [5], "power": 1},
            {"energy": [2_000_000, 2_004_000], "power": 95_000},
        ],
    )
    source = NvmlSource(["0", "2"])
    first, second = source.read(), source.read()
    source.close()
    source.close()
    assert first.gpus["0"].energy_j == pytest.approx(1000.0)
    assert second.gpus["0"].energy_j == pytest.approx(1250.5)
    assert first.gpus["0"].power_w == pytest.approx(312.25)
    assert second.gpus["2"].energy_j == pytest.approx(2004.0)
    assert second.gpus["2"].power_w == pytest.approx(95.0)
    assert sorted(first.gpus) == ["0", "2"]
    assert second.at_s > first.at_s
    calls = sys.modules["pynvml"].CALLS
    assert calls == [
        "nvmlInit",
        "nvmlDeviceGetCount",
        "nvmlDeviceGetHandleByIndex(0)",
        "nvmlDeviceGetHandleByIndex(2)",
        *[
            f"nvmlDevice{call}({index})"
            for _ in range(2)
            for index in (0, 2)
            for call in ("GetTotalEnergyConsumption", "GetPowerUsage")
        ],
        "nvmlShutdown",  # once, though closed twice
    ]


def test_a_uuid_names_its_gpu_and_is_passed_as_bytes(library_dir: Path) -> None:
    write_pynvml(
        library_dir,
        [
            {"energy": [1], "power": 1, "uuid": "GPU-other"},
            {"energy": [7_000], "power": 70_000, "uuid": UUID},
        ],
    )
    source = NvmlSource([UUID])
    reading = source.read()
    source.close()
    assert list(reading.gpus) == [UUID]
    assert reading.gpus[UUID].energy_j == pytest.approx(7.0)
    assert reading.gpus[UUID].power_w == pytest.approx(70.0)
    assert f"nvmlDeviceGetHandleByUUID({UUID.encode()!r})" in sys.modules["pynvml"].CALLS


def test_an_unknown_uuid_is_no_device(library_dir: Path) -> None:
    write_pynvml(library_dir, [{"energy": [1], "power": 1, "uuid": "GPU-other"}])
    with pytest.raises(TelemetryUnavailable) as caught:
        NvmlSource(["GPU-missing"])
    assert caught.value.reason == "no_device"
    assert "GPU-missing" in str(caught.value) and "Not Found" in str(caught.value)
    assert sys.modules["pynvml"].CALLS[-1] == "nvmlShutdown"


def test_an_index_beyond_the_devices_is_no_device(library_dir: Path) -> None:
    write_pynvml(library_dir, [{"energy": [1], "power": 1}, {"energy": [1], "power": 1}])
    with pytest.raises(TelemetryUnavailable) as caught:
        NvmlSource(["0", "2"])
    assert caught.value.reason == "no_device"
    assert str(caught.value) == "NVML lists 2 GPU(s) (numbered 0-1); it has no GPU '2'"
    assert sys.modules["pynvml"].CALLS[-1] == "nvmlShutdown"


def test_energy_not_supported_gives_none_and_power_still_read(library_dir: Path) -> None:
    write_pynvml(library_dir, [{"energy": "not_supported", "power": 250_000}])
    source = NvmlSource(["0"])
    reading = source.read()
    source.close()
    assert reading.gpus["0"].energy_j is None
    assert reading.gpus["0"].power_w == pytest.approx(250.0)


def test_a_driver_that_does_not_load_is_unavailable(library_dir: Path) -> None:
    write_pynvml(library_dir, [], init_error=True)
    with pytest.raises(TelemetryUnavailable) as caught:
        NvmlSource(["0"])
    assert caught.value.reason == "unavailable"
    assert "Driver Not Loaded" in str(caught.value)
    assert sys.modules["pynvml"].CALLS == ["nvmlInit"]  # nothing to shut down


def test_a_library_that_does_not_import_is_unavailable_and_says_how_to_install(
    library_dir: Path,
) -> None:
    (library_dir / "pynvml.py").write_text(BROKEN_IMPORT)
    with pytest.raises(TelemetryUnavailable) as caught:
        NvmlSource(["0"])
    assert caught.value.reason == "unavailable"
    assert "pynvml does not import" in str(caught.value)
    assert "specbench[nvidia]" in str(caught.value)
