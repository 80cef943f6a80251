"""PowerSampler: its rate (≥ 1 Hz), and failures handed to the callback, never raised."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from stand_ins import write_pynvml
from test_exporter_source import free_port

from specbench.energy.exporter import ExporterSource
from specbench.energy.nvml_source import NvmlSource
from specbench.energy.reading import Reading
from specbench.energy.sampler import PowerSampler


def run_for(sampler: PowerSampler, seconds: float) -> None:
    sampler.start()
    time.sleep(seconds)
    sampler.stop()


def test_the_default_rate_is_two_readings_a_second(library_dir: Path) -> None:
    write_pynvml(library_dir, [{"watts": 300.0}])
    source = NvmlSource(["0"])
    readings: list[Reading] = []
    errors: list[tuple[float, str, str]] = []
    sampler = PowerSampler(source, readings.append, lambda *e: errors.append(e))
    run_for(sampler, 2.2)
    source.close()
    assert sampler.thread is not None and not sampler.thread.is_alive()
    assert errors == []
    # at 0, 0.5, 1, 1.5 and 2 s; one fewer tolerated on a loaded machine
    assert 4 <= len(readings) <= 5
    gaps = [b.at_s - a.at_s for a, b in itertools.pairwise(readings)]
    assert max(gaps) < 1.0  # never below 1 Hz
    assert min(gaps) > 0.3
    assert all(r.gpus["0"].power_w == 300.0 for r in readings)


def test_a_faster_interval_samples_faster(library_dir: Path) -> None:
    write_pynvml(library_dir, [{"watts": 300.0}])
    source = NvmlSource(["0"])
    readings: list[Reading] = []
    run_for(PowerSampler(source, readings.append, print, interval_s=0.1), 1.0)
    source.close()
    assert 7 <= len(readings) <= 11


def test_an_unreachable_source_goes_to_on_error_and_sampling_goes_on() -> None:
    url = f"http://127.0.0.1:{free_port()}/metrics"
    errors: list[tuple[float, str, str]] = []
    readings: list[Reading] = []
    started = time.perf_counter()
    sampler = PowerSampler(
        ExporterSource(url, ["0"]), readings.append, lambda *e: errors.append(e), interval_s=0.2
    )
    run_for(sampler, 0.9)
    assert readings == []
    assert len(errors) >= 3
    assert {reason for _, reason, _ in errors} == {"unreachable"}
    assert all(url in message for _, _, message in errors)
    assert all(started <= at_s <= time.perf_counter() for at_s, _, _ in errors)


class FaultySource:
    """A source whose library raises something that is not TelemetryUnavailable."""

    name = "faulty"

    def read(self) -> Reading:
        raise RuntimeError("segfault avoided, barely")

    def close(self) -> None:
        pass


def test_an_unexpected_library_error_is_reported_as_unavailable() -> None:
    errors: list[tuple[float, str, str]] = []
    run_for(PowerSampler(FaultySource(), print, lambda *e: errors.append(e), interval_s=0.2), 0.3)
    assert errors
    assert errors[0][1:] == ("unavailable", "RuntimeError: segfault avoided, barely")


def test_a_failing_callback_ends_sampling_and_stop_raises_it(library_dir: Path) -> None:
    write_pynvml(library_dir, [{"watts": 300.0}])
    source = NvmlSource(["0"])
    calls: list[Reading] = []

    def full_disk(reading: Reading) -> None:
        calls.append(reading)
        raise OSError(28, "No space left on device")

    sampler = PowerSampler(source, full_disk, print, interval_s=0.1)
    sampler.start()
    time.sleep(0.5)
    assert sampler.thread is not None and not sampler.thread.is_alive()
    with pytest.raises(OSError, match="No space left on device"):
        sampler.stop()
    source.close()
    assert len(calls) == 1


@pytest.mark.parametrize("interval_s", [0.0, -1.0, 1.5])
def test_an_interval_slower_than_1_hz_is_refused(interval_s: float) -> None:
    with pytest.raises(ValueError, match=r"interval_s must be in \(0, 1\] seconds"):
        PowerSampler(FaultySource(), print, print, interval_s=interval_s)
