"""CellEnergy: a power sample in flight when the window's after read starts never crosses it
(the e2e energy test's one failure under load, 2026-12-07)."""

from __future__ import annotations

import threading
from pathlib import Path

from specbench.energy.reading import GpuReading, Reading
from specbench.energy.select import CountedGpus
from specbench.measure.energy import CellEnergy, EnergyMeter

#: Each read served adds this much to the counter; the power reported matches it per second.
JOULES_PER_READ = 100.0
#: How long the first sample waits for another read to be served before answering anyway.
HOLD_S = 0.5


class CrossingExporter:
    """An exporter whose first power sample, once in flight, is answered after any read
    started later: two HTTP GETs on a loaded machine, the later one served first.

    Like `ExporterSource`, a reading is stamped when its read starts (here the call's number,
    1, 2, 3, … seconds, so no clock is raced); the counter counts the reads served so far.
    """

    name = "http://127.0.0.1:1/metrics"

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = 0
        self.served = 0
        self.sample_in_flight = threading.Event()
        self.later_read_served = threading.Event()

    def read(self) -> Reading:
        with self.lock:
            self.calls += 1
            call = self.calls
        if call == 2:  # the sampler's first read (the before read is call 1)
            self.sample_in_flight.set()
            # Answered after a read that started later, if one starts within HOLD_S; a reader
            # that starts none while this one is in flight gets it after HOLD_S, in order.
            self.later_read_served.wait(HOLD_S)
        with self.lock:
            self.served += 1
            joules = 1000.0 + JOULES_PER_READ * self.served
        if call > 2:
            self.later_read_served.set()
        return Reading(float(call), {"0": GpuReading("0", joules, JOULES_PER_READ)})

    def close(self) -> None:
        pass


async def test_a_sample_in_flight_is_answered_before_the_after_read(tmp_path: Path) -> None:
    # Before the fix the after read went out while the sample was in flight, was answered
    # first (1200 J at t = 2 s), and the sample stamped t = 1 s came back with 1300 J:
    # counter_backwards, "fell from 1300.000 J to 1200.000 J at t = 2.000 s".
    source = CrossingExporter()
    meter = EnergyMeter(source.name, source, CountedGpus(("0",), "gpu_ids"), "test")
    cell = CellEnergy(meter, tmp_path)
    try:
        await cell.edge("before")
        cell.start_sampling()
        assert source.sample_in_flight.wait(5)
        await cell.edge("after")
        cell.stop_sampling()
    finally:
        cell.close()
    energy = cell.summary(40)
    assert (energy.valid, energy.reason, energy.detail) == (True, None, None)
    # before 1100 J (t = 0), the sample 1200 J (t = 1 s), after 1300 J (t = 2 s)
    assert energy.samples == 1 and energy.window_s == 2.0
    assert energy.joules == 2 * JOULES_PER_READ == energy.sampled_joules
    assert energy.joules_per_output_token == 5.0
    assert source.calls == 3
