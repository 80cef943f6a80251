"""Which source a `gpu_telemetry` setting opens, and the auto choice (amdsmi, then NVML)
with the libraries stood in by module files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from stand_ins import BROKEN_IMPORT, write_amdsmi, write_pynvml

from specbench.energy.amdsmi_source import AmdSmiSource
from specbench.energy.exporter import ExporterSource
from specbench.energy.nvml_source import NvmlSource
from specbench.energy.reading import TelemetryUnavailable
from specbench.energy.sources import auto_source, check_setting, open_source


@pytest.mark.parametrize(
    "value",
    ["auto", "off", "amdsmi", "nvml", "http://localhost:5000/metrics", "https://10.0.0.7:9400"],
)
def test_allowed_settings(value: str) -> None:
    assert check_setting(value) is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (
            "rocm",
            "'rocm' is not one of auto, off, amdsmi, nvml or an exporter URL "
            "http(s)://host:port[/path]",
        ),
        ("ftp://node:5000", "'ftp://node:5000': the exporter URL must be http or https, not 'ftp'"),
        (
            "http://node/metrics",
            "'http://node/metrics': the exporter URL needs a host and a port "
            "(http://host:5000/metrics)",
        ),
        (
            "http://:5000/metrics",
            "'http://:5000/metrics': the exporter URL needs a host and a port "
            "(http://host:5000/metrics)",
        ),
        (
            "http://node:port/metrics",
            "'http://node:port/metrics' is not a URL (Port could not be cast to integer value "
            "as 'port'); allowed: auto, off, amdsmi, nvml or an exporter URL "
            "http(s)://host:port[/path]",
        ),
    ],
)
def test_a_setting_not_allowed_is_one_line_naming_what_is(value: str, problem: str) -> None:
    assert check_setting(value) == problem


def test_open_source_opens_what_the_setting_names(library_dir: Path) -> None:
    write_amdsmi(library_dir, [{"energy": [1], "power": 1}])
    write_pynvml(library_dir, [{"energy": [1], "power": 1}])
    opened = [open_source(setting, ["0"]) for setting in ("amdsmi", "nvml", "http://n:5000")]
    assert [type(s) for s in opened] == [AmdSmiSource, NvmlSource, ExporterSource]
    assert [s.name for s in opened] == ["amdsmi", "nvml", "http://n:5000"]
    for source in opened:
        source.close()
    with pytest.raises(ValueError, match="'auto' opens no source"):
        open_source("auto", ["0"])
    with pytest.raises(ValueError, match="'rocm' is not one of"):
        open_source("rocm", ["0"])


def test_auto_takes_amdsmi_first_and_never_opens_nvml(library_dir: Path) -> None:
    write_amdsmi(library_dir, [{"energy": [1], "power": 700}] * 2)
    write_pynvml(library_dir, [{"energy": [1], "power": 1}] * 2)
    source, detail = auto_source(["0", "1"])
    assert source is not None and source.name == "amdsmi"
    source.close()
    assert detail == "auto: amdsmi reads GPU(s) 0, 1"
    assert "pynvml" not in sys.modules


def test_auto_falls_back_to_nvml_saying_why_amdsmi_did_not_serve(library_dir: Path) -> None:
    (library_dir / "amdsmi.py").write_text(BROKEN_IMPORT)
    write_pynvml(library_dir, [{"energy": [1], "power": 1}])
    source, detail = auto_source(["0"])
    assert source is not None and source.name == "nvml"
    source.close()
    assert detail.startswith("auto: nvml reads GPU(s) 0; amdsmi: amdsmi does not import (")


def test_auto_with_a_gpu_amdsmi_lacks_takes_nvml(library_dir: Path) -> None:
    write_amdsmi(library_dir, [{"energy": [1], "power": 1}])
    write_pynvml(library_dir, [{"energy": [1], "power": 1}] * 2)
    source, detail = auto_source(["0", "1"])
    assert source is not None and source.name == "nvml"
    source.close()
    assert detail == (
        "auto: nvml reads GPU(s) 0, 1; amdsmi: amdsmi lists 1 GPU(s) (numbered 0-0); "
        "it has no GPU '1'"
    )
    assert sys.modules["amdsmi"].CALLS[-1] == "amdsmi_shut_down"


def test_auto_with_neither_gives_none_and_why_each_failed(library_dir: Path) -> None:
    write_amdsmi(library_dir, [], init_error=True)
    write_pynvml(library_dir, [], init_error=True)
    source, detail = auto_source(["0"])
    assert source is None
    assert detail == (
        "auto: no GPU telemetry; "
        "amdsmi: amdsmi did not initialise (is the amdgpu driver loaded?): Error code: 8 | "
        "AMDSMI_STATUS_INIT_ERROR - Initialization error; "
        "nvml: NVML did not initialise (is the NVIDIA driver loaded?): Driver Not Loaded"
    )


def test_a_failed_open_raises_telemetry_unavailable(library_dir: Path) -> None:
    write_pynvml(library_dir, [{"energy": [1], "power": 1}])
    with pytest.raises(TelemetryUnavailable) as caught:
        open_source("nvml", ["3"])
    assert caught.value.reason == "no_device"
