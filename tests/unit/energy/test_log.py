"""`energy.jsonl`: written line by line, read back as typed records, and the whole path from
a stood-in NVML through the sampler and the log to the window's figures."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from stand_ins import write_pynvml

from specbench.common.errors import SpecbenchError
from specbench.energy.log import EnergyLogWriter, LogError, LogHeader, LogReading, read_energy_log
from specbench.energy.nvml_source import NvmlSource
from specbench.energy.reading import GpuReading, Reading
from specbench.energy.sampler import PowerSampler
from specbench.energy.window import energy_summary


def gpu(name: str, energy_j: float | None, power_w: float | None) -> GpuReading:
    return GpuReading(gpu=name, energy_j=energy_j, power_w=power_w)


def test_records_round_trip_with_times_from_the_before_read(tmp_path: Path) -> None:
    path = tmp_path / "energy.jsonl"
    log = EnergyLogWriter(path)
    log.header("amdsmi", "auto: amdsmi reads GPU(s) 0, 1", ["0", "1"])
    log.reading("before", Reading(100.0, {"0": gpu("0", 1500.5, 745.0), "1": gpu("1", 9.0, None)}))
    log.reading("sample", Reading(100.5, {"0": gpu("0", 1872.0, 743.0)}))
    # each line is on disk as soon as it is written
    assert len(path.read_text().splitlines()) == 3
    log.error("sample", 101.0, "unavailable", "amdsmi: AMDSMI_STATUS_BUSY")
    log.reading("after", Reading(102.25, {"0": gpu("0", 3200.0, 744.0), "1": gpu("1", 12.0, None)}))
    log.close()
    log.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0] == {
        "kind": "header",
        "source": "amdsmi",
        "source_detail": "auto: amdsmi reads GPU(s) 0, 1",
        "gpus": ["0", "1"],
    }
    assert lines[1] == {
        "kind": "before",
        "t_s": 0.0,
        "gpus": {
            "0": {"energy_j": 1500.5, "power_w": 745.0},
            "1": {"energy_j": 9.0, "power_w": None},
        },
    }
    assert lines[3] == {
        "kind": "error",
        "edge": "sample",
        "t_s": 1.0,
        "reason": "unavailable",
        "message": "amdsmi: AMDSMI_STATUS_BUSY",
    }
    assert read_energy_log(path) == [
        LogHeader("amdsmi", "auto: amdsmi reads GPU(s) 0, 1", ["0", "1"]),
        LogReading("before", 0.0, {"0": gpu("0", 1500.5, 745.0), "1": gpu("1", 9.0, None)}),
        LogReading("sample", 0.5, {"0": gpu("0", 1872.0, 743.0)}),
        LogError("sample", 1.0, "unavailable", "amdsmi: AMDSMI_STATUS_BUSY"),
        LogReading("after", 2.25, {"0": gpu("0", 3200.0, 744.0), "1": gpu("1", 12.0, None)}),
    ]


def test_a_cell_with_telemetry_off_holds_the_header_alone(tmp_path: Path) -> None:
    path = tmp_path / "energy.jsonl"
    log = EnergyLogWriter(path)
    log.header("off", "auto: no GPU telemetry; amdsmi: …; nvml: …", ["0"])
    log.close()
    assert path.read_text() == (
        '{"kind": "header", "source": "off", "source_detail": '
        '"auto: no GPU telemetry; amdsmi: \\u2026; nvml: \\u2026", "gpus": ["0"]}\n'
    )
    summary = energy_summary(read_energy_log(path), output_tokens=10)
    assert (summary.reason, summary.detail) == ("off", "auto: no GPU telemetry; amdsmi: …; nvml: …")


def test_a_last_line_cut_short_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "energy.jsonl"
    path.write_text(
        '{"kind": "header", "source": "nvml", "source_detail": null, "gpus": ["0"]}\n'
        '{"kind": "before", "t_s": 0.0, "gpus": {"0": {"energy_j": 1.0, "power_w": 2.0}}}\n'
        '{"kind": "sample", "t_s": 0.5, "gpus": {"0": {"ener'
    )
    assert read_energy_log(path) == [
        LogHeader("nvml", None, ["0"]),
        LogReading("before", 0.0, {"0": gpu("0", 1.0, 2.0)}),
    ]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"kind": "sample", "t_s": 0.5, "gpus": {"0": {"ener', "not JSON"),
        ('{"kind": "middle", "t_s": 0.5}', "not an energy record (unknown kind 'middle')"),
        ('{"kind": "sample", "t_s": 0.5, "gpus": {"0": {"energy_j": "12"}}}',
         "not an energy record ('12' is not a number)"),
        ('{"kind": "error", "edge": "sample", "t_s": 1, "reason": "busy", "message": "m"}',
         "unknown edge 'sample' or reason 'busy'"),
    ],
)  # fmt: skip
def test_a_bad_line_inside_the_file_names_the_file_and_line(
    tmp_path: Path, line: str, says: str
) -> None:
    path = tmp_path / "energy.jsonl"
    path.write_text(
        '{"kind": "header", "source": "nvml", "source_detail": null, "gpus": ["0"]}\n'
        f"{line}\n"
        '{"kind": "after", "t_s": 1.0, "gpus": {}}\n'
    )
    with pytest.raises(SpecbenchError) as caught:
        read_energy_log(path)
    assert str(caught.value).startswith(f"{path}:2: ")
    assert says in str(caught.value)


def test_a_window_read_through_the_sampler_and_the_log_agrees_with_power(
    library_dir: Path, tmp_path: Path
) -> None:
    # A stood-in GPU drawing a steady 420 W whose counter grows by 420 J a second.
    write_pynvml(library_dir, [{"watts": 420.0}, {"watts": 80.0}])
    source = NvmlSource(["0", "1"])
    path = tmp_path / "energy.jsonl"
    log = EnergyLogWriter(path)
    log.header(source.name, "nvml named in the suite", ["0", "1"])
    log.reading("before", source.read())
    sampler = PowerSampler(
        source, lambda r: log.reading("sample", r), lambda *e: log.error("sample", *e), 0.25
    )
    sampler.start()
    time.sleep(1.3)
    sampler.stop()
    log.reading("after", source.read())
    log.close()
    source.close()
    summary = energy_summary(read_energy_log(path), output_tokens=2000)
    assert summary.valid is True, summary.detail
    assert summary.window_s is not None and 1.3 <= summary.window_s < 2.0
    assert summary.samples >= 4
    assert summary.mean_power_w_per_gpu == pytest.approx(250.0, rel=0.02)  # (420 + 80) / 2
    assert summary.joules == pytest.approx(500.0 * summary.window_s, rel=0.02)
    assert summary.sampled_joules == pytest.approx(500.0 * summary.window_s, rel=1e-6)
    assert summary.counter_power_agree is True
    assert summary.joules_per_output_token == pytest.approx(summary.joules / 2000)
