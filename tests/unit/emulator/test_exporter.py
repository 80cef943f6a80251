"""The emulator's GPU exporter text (AMD µJ, DCGM mJ, each exporter's labels) and the rules
between its settings."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from specbench.common.errors import SpecbenchError
from specbench.emulator import make_emulator_config
from specbench.emulator.exporter import exposition
from specbench.emulator.power import GpuSample
from specbench.launch.argv import build_argv
from specbench.launch.config import ServerConfig

SAMPLES = {0: GpuSample(1.0e9 + 0.125, 101.5), 3: GpuSample(1.003e9, 100.0)}


def _parsed(text: bytes) -> dict[tuple[str, str], tuple[float, dict[str, str]]]:
    """(sample name, GPU id) → (value, labels), read by prometheus_client's parser."""
    parsed = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            gpu = sample.labels.get("gpu_id", sample.labels.get("gpu", ""))
            parsed[(sample.name, gpu)] = (sample.value, sample.labels)
    return parsed


def test_the_amd_exporter_reports_microjoules_and_watts_per_gpu_id() -> None:
    parsed = _parsed(exposition(SAMPLES, "amd", "node-7"))
    assert parsed[("gpu_energy_consumed", "0")][0] == 1.000000000125e15
    assert parsed[("gpu_energy_consumed", "3")][0] == 1.003e15
    assert parsed[("gpu_package_power", "0")][0] == 101.5
    assert parsed[("gpu_power_usage", "3")][0] == 100.0
    labels = parsed[("gpu_energy_consumed", "3")][1]
    assert labels == {"gpu_id": "3", "serial_number": "EMU000000000003", "hostname": "node-7"}
    assert {gpu for _, gpu in parsed} == {"0", "3"}


def test_the_dcgm_exporter_reports_millijoules_and_watts_per_gpu() -> None:
    parsed = _parsed(exposition(SAMPLES, "dcgm", "node-7"))
    # A counter without `_total` in its name: the parser adds it, as for the real exporter.
    assert parsed[("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total", "0")][0] == 1.000000000125e12
    assert parsed[("DCGM_FI_DEV_POWER_USAGE", "0")][0] == 101.5
    labels = parsed[("DCGM_FI_DEV_POWER_USAGE", "3")][1]
    assert labels["Hostname"] == "node-7" and labels["UUID"].startswith("GPU-")
    assert set(labels) == {"gpu", "UUID", "modelName", "Hostname"}
    assert not any(name.startswith("gpu_") for name, _ in parsed)


def test_exporter_settings_parse_the_work_gpus() -> None:
    config = make_emulator_config(
        port=8000, exporter_port=9400, exporter_gpus=8, exporter_work_gpus="4, 5,6,7"
    )
    assert config.work_gpus == (4, 5, 6, 7)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"exporter_format": "dcgm"},
            "emulator options: --exporter-format needs --exporter-port (left at 0, which "
            "turns it off)",
        ),
        ({"power_idle_w": 150.0}, "--power-idle-w needs --exporter-port"),
        (
            {"exporter_port": 9400, "exporter_fault_after_reads": 3},
            "--exporter-fault-after-reads needs --exporter-fault (left at 'none'",
        ),
        (
            {"exporter_port": 9400, "exporter_work_gpus": "0,8"},
            "--exporter-work-gpus '0,8': GPU 8 is not listed (--exporter-gpus 8 lists ids 0 to 7)",
        ),
        ({"exporter_port": 9400, "exporter_work_gpus": "1,1"}, "GPU 1 is given twice"),
        ({"exporter_port": 9400, "exporter_work_gpus": "0-3"}, "expected comma-separated GPU"),
        ({"exporter_port": 8000}, "--exporter-port 8000 is also --port"),
        ({"exporter_port": 9400, "exporter_fault": "flaky"}, "(--exporter-fault): Input should"),
        ({"exporter_port": 70000}, "(--exporter-port): Input should be less than or equal"),
        ({"exporter_port": 9400, "power_idle_w": -1.0}, "(--power-idle-w)"),
    ],
)
def test_bad_exporter_settings_are_one_line_naming_the_option(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(SpecbenchError) as raised:
        make_emulator_config(port=8000, **options)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_suite_turns_the_exporter_on_and_the_emulator_takes_it_as_flags() -> None:
    server = ServerConfig(
        engine="emulator",
        model="emu",
        emulator={
            "exporter_port": 9400,
            "exporter_format": "dcgm",
            "exporter_work_gpus": "0,1",
            "exporter_fault": "frozen",
            "exporter_fault_after_reads": 4,
        },
    )
    argv = build_argv(server, per_request_timing=True)
    for flag, value in (
        ("--exporter-port", "9400"),
        ("--exporter-format", "dcgm"),
        ("--exporter-work-gpus", "0,1"),
        ("--exporter-fault", "frozen"),
        ("--exporter-fault-after-reads", "4"),
    ):
        assert argv[argv.index(flag) + 1] == value
    plain = build_argv(ServerConfig(engine="emulator", model="emu"), per_request_timing=True)
    assert not [arg for arg in plain if "exporter" in arg or "energy" in arg or "power" in arg]
    with pytest.raises(ValueError, match="exporter_fault"):
        ServerConfig(engine="emulator", model="emu", emulator={"exporter_fault": "flaky"})
