"""The emulated GPUs' power model: each listed GPU's energy counter and power at a read, from
the time since the exporter started and the engine's token counters, with faults on demand.

Energy of GPU g, t seconds after the start, with G generated and D drafted tokens so far:

    E_g(t) = base_g + idle_w · t + [g works] · (J/generated · G + J/drafted · D) / |work GPUs|

so over a window whose edges find the server idle, the counted GPUs' energy delta is exactly
idle_w · |counted| · Δt + J/generated · ΔG + J/drafted · ΔD (with every work GPU counted;
`emulator.truth.window_energy_j`). Power at a read is the true energy since the previous read
over the time since it (idle_w at the first), so a sampler's trapezoid agrees with the
counter at steady load. `gpu_energy_j` is pure; `PowerMeter` holds the reads (their count
decides the fault, the previous one the power) and takes its clock as an argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from specbench.common.emulator_settings import ExporterFault
from specbench.emulator.config import EmulatorConfig

#: A counter that has run since driver load (about 23 days at 500 W), not one from 0.
BASE_ENERGY_J = 1.0e9
#: Each GPU's counter starts this much above the previous one's, so a reader that mixes two
#: GPUs up sees it. In µJ the largest base stays below 2^53: whole microjoules are exact.
GPU_BASE_STEP_J = 1.0e6
#: How much lower each read under the `backwards` fault is than the one before it.
BACKWARDS_STEP_J = 1000.0


@dataclass(frozen=True, slots=True)
class PowerModel:
    """What the emulated GPUs draw: idle watts each, joules per token over the work GPUs."""

    gpus: int
    work_gpus: tuple[int, ...]
    idle_w: float
    j_per_generated: float
    j_per_drafted: float

    @classmethod
    def from_config(cls, config: EmulatorConfig) -> PowerModel:
        """The model `specbench emulate`'s exporter settings describe."""
        return cls(
            gpus=config.exporter_gpus,
            work_gpus=config.work_gpus,
            idle_w=config.power_idle_w,
            j_per_generated=config.energy_per_generated_token_j,
            j_per_drafted=config.energy_per_drafted_token_j,
        )


def gpu_energy_j(
    model: PowerModel, gpu: int, elapsed_s: float, generated: float, drafted: float
) -> float:
    """E_g(t) of the module docstring: GPU `gpu`'s counter `elapsed_s` after the start."""
    energy = BASE_ENERGY_J + GPU_BASE_STEP_J * gpu + model.idle_w * elapsed_s
    if gpu in model.work_gpus:
        work = model.j_per_generated * generated + model.j_per_drafted * drafted
        energy += work / len(model.work_gpus)
    return energy


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One GPU at one exporter read, as reported: its counter (J) and its power (W)."""

    energy_j: float
    power_w: float


class PowerMeter:
    """The exporter's reads of the power model, counted from 1, each fault from its read on.

    Faults (from read `fault_after_reads` on): `reset` reports each counter less its true
    value at that read (0 there, accumulating after); `backwards` reports each read
    BACKWARDS_STEP_J below the previous report; `frozen` keeps the counters at that read's
    value; `missing_gpu` leaves the first work GPU out; `unreachable` answers nothing
    (`read` returns None). Power always follows the true energy, as a board's sensor would.
    """

    def __init__(
        self,
        model: PowerModel,
        clock: Callable[[], float],
        fault: ExporterFault = "none",
        fault_after_reads: int = 1,
    ) -> None:
        self.model = model
        self.reads = 0
        self._clock = clock
        self._fault = fault
        self._fault_after_reads = fault_after_reads
        self._start_s = clock()
        self._last_s: float | None = None
        self._last_true: list[float] = []
        self._last_power: list[float] = [model.idle_w] * model.gpus
        self._last_reported: list[float] | None = None
        self._fault_origin: list[float] | None = None

    def read(self, generated: float, drafted: float) -> dict[int, GpuSample] | None:
        """Every listed GPU now, given the engine's generated and drafted tokens so far;
        None when the exporter is unreachable."""
        self.reads += 1
        now = self._clock()
        model = self.model
        true = [
            gpu_energy_j(model, gpu, now - self._start_s, generated, drafted)
            for gpu in range(model.gpus)
        ]
        power = self._power(now, true)
        self._last_s, self._last_true, self._last_power = now, true, power
        faulted = self._fault != "none" and self.reads >= self._fault_after_reads
        if faulted and self._fault == "unreachable":
            return None
        reported = self._faulted(true) if faulted else true
        self._last_reported = reported
        listed: Sequence[int] = range(model.gpus)
        if faulted and self._fault == "missing_gpu":
            listed = [gpu for gpu in listed if gpu != model.work_gpus[0]]
        return {gpu: GpuSample(reported[gpu], power[gpu]) for gpu in listed}

    def _power(self, now: float, true: list[float]) -> list[float]:
        """Each GPU's true energy since the previous read over the time since it."""
        if self._last_s is None or now <= self._last_s:
            return self._last_power
        elapsed = now - self._last_s
        return [
            (energy - last) / elapsed for energy, last in zip(true, self._last_true, strict=True)
        ]

    def _faulted(self, true: list[float]) -> list[float]:
        """The counters as the fault reports them (`true` at this read)."""
        if self._fault_origin is None:
            self._fault_origin = true
        origin = self._fault_origin
        if self._fault == "reset":
            return [energy - start for energy, start in zip(true, origin, strict=True)]
        if self._fault == "frozen":
            return origin
        if self._fault == "backwards":
            previous = self._last_reported if self._last_reported is not None else true
            return [energy - BACKWARDS_STEP_J for energy in previous]
        return true
