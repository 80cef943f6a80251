"""The emulated GPUs' power model (issue 41, part 4): exact joules for known token counts and
time, power as the average since the previous read, and each exporter fault from its read on,
with the clock injected."""

from __future__ import annotations

import pytest

from specbench.emulator.power import (
    BACKWARDS_STEP_J,
    BASE_ENERGY_J,
    GPU_BASE_STEP_J,
    ExporterFault,
    GpuSample,
    PowerMeter,
    PowerModel,
    gpu_energy_j,
)

# 4 GPUs listed, the work on GPUs 1 and 2: each takes half of every token's joules.
MODEL = PowerModel(gpus=4, work_gpus=(1, 2), idle_w=100.0, j_per_generated=0.05, j_per_drafted=0.03)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now_s = 50.0

    def __call__(self) -> float:
        return self.now_s


def test_a_work_gpu_adds_its_share_of_the_token_joules_to_idle_power_times_time() -> None:
    # 2.5 s idle at 100 W = 250 J; tokens: (0.05·1000 + 0.03·3000) / 2 GPUs = 70 J
    assert gpu_energy_j(MODEL, 1, 2.5, 1000, 3000) == BASE_ENERGY_J + GPU_BASE_STEP_J + 320.0
    assert gpu_energy_j(MODEL, 2, 2.5, 1000, 3000) == BASE_ENERGY_J + 2 * GPU_BASE_STEP_J + 320.0
    # A GPU that does no work only idles.
    assert gpu_energy_j(MODEL, 0, 2.5, 1000, 3000) == BASE_ENERGY_J + 250.0
    assert gpu_energy_j(MODEL, 3, 0.0, 1000, 3000) == BASE_ENERGY_J + 3 * GPU_BASE_STEP_J


def test_power_is_the_energy_since_the_previous_read_over_the_time_since_it() -> None:
    clock = Clock()
    meter = PowerMeter(MODEL, clock)
    clock.now_s += 1.0
    first = meter.read(generated=0, drafted=0)
    assert first is not None
    # The first read has no interval behind it: idle watts, the counter 1 s of idle in.
    assert first[1] == GpuSample(BASE_ENERGY_J + GPU_BASE_STEP_J + 100.0, 100.0)
    clock.now_s += 2.0
    second = meter.read(generated=400, drafted=1200)
    assert second is not None
    # GPU 1 over 2 s: 200 J idle + (0.05·400 + 0.03·1200) / 2 = 28 J → 114 W average
    assert second[1].energy_j - first[1].energy_j == pytest.approx(228.0, abs=1e-6)
    assert second[1].power_w == pytest.approx(114.0, abs=1e-6)
    assert second[0].power_w == pytest.approx(100.0, abs=1e-6)
    # A trapezoid over the reported powers agrees with the counter at steady load.
    clock.now_s += 2.0
    third = meter.read(generated=800, drafted=2400)
    assert third is not None
    trapezoid = (second[1].power_w + third[1].power_w) / 2 * 2.0
    assert trapezoid == pytest.approx(third[1].energy_j - second[1].energy_j, abs=1e-6)


def _reads(fault: ExporterFault, count: int) -> list[dict[int, GpuSample] | None]:
    """`count` reads 1 s apart, 100 more generated and 300 more drafted tokens each time,
    the fault holding from the 3rd read on."""
    clock = Clock()
    meter = PowerMeter(MODEL, clock, fault, fault_after_reads=3)
    reads = []
    for read in range(1, count + 1):
        clock.now_s += 1.0
        reads.append(meter.read(generated=100 * read, drafted=300 * read))
    assert meter.reads == count
    return reads


def _energy(read: dict[int, GpuSample] | None, gpu: int) -> float:
    assert read is not None
    return read[gpu].energy_j


# GPU 1's true counter at read n: n s idle + n · (5 + 9) / 2 J of tokens.
def _true(read: int) -> float:
    return BASE_ENERGY_J + GPU_BASE_STEP_J + 100.0 * read + 7.0 * read


def test_no_fault_reports_the_true_counters() -> None:
    reads = _reads("none", 5)
    assert [_energy(read, 1) for read in reads] == pytest.approx([_true(n) for n in range(1, 6)])


def test_reset_restarts_the_counters_at_zero_from_its_read_and_keeps_counting() -> None:
    reads = _reads("reset", 5)
    assert _energy(reads[1], 1) == pytest.approx(_true(2))
    assert _energy(reads[2], 1) == 0.0
    assert _energy(reads[3], 1) == pytest.approx(107.0)
    assert _energy(reads[4], 1) == pytest.approx(214.0)
    assert _energy(reads[4], 0) == pytest.approx(200.0)


def test_backwards_reports_each_read_lower_than_the_last() -> None:
    reads = _reads("backwards", 5)
    energies = [_energy(read, 1) for read in reads]
    assert energies[:2] == pytest.approx([_true(1), _true(2)])
    assert energies[2:] == pytest.approx([_true(2) - BACKWARDS_STEP_J * step for step in (1, 2, 3)])


def test_frozen_counters_stop_while_power_still_moves() -> None:
    reads = _reads("frozen", 5)
    assert [_energy(read, 1) for read in reads[2:]] == pytest.approx([_true(3)] * 3)
    assert reads[4] is not None and reads[4][1].power_w == pytest.approx(107.0)


def test_missing_gpu_drops_the_first_work_gpu_from_its_read_on() -> None:
    reads = _reads("missing_gpu", 4)
    assert [sorted(read) for read in reads if read is not None] == [
        [0, 1, 2, 3],
        [0, 1, 2, 3],
        [0, 2, 3],
        [0, 2, 3],
    ]


def test_unreachable_answers_nothing_from_its_read_on() -> None:
    reads = _reads("unreachable", 4)
    assert [read is None for read in reads] == [False, False, True, True]
