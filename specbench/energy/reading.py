"""What an energy source returns: one reading of each GPU's counter and power, and the
reason codes for a figure that cannot be given.

Every source reads synchronously (a library call or one HTTP GET) and is called off the
event loop: at the window's edges through `asyncio.to_thread`, between them from the
sampler's thread. Units are normalised here, at the boundary: joules and watts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from specbench.store.summary import EnergyReason

#: Why an energy figure is null (never 0), declared once in `store.summary`. `off`: the suite or
#: the auto choice turned telemetry off; `unavailable`: the library did not import or its driver
#: did not answer; `no_device`: the library answered but lists no such GPU; `unreachable`: the
#: exporter did not answer (at the window's edge, or mid-window); `no_energy_counter`: the source
#: gives power only; `gpu_missing`: a counted GPU absent from a reading; `counter_reset`: a counter
#: fell to near zero inside the window; `counter_backwards`: it fell otherwise; `counter_frozen`:
#: it did not move over a window of work; `no_output_tokens`: no token count to divide by.
ReasonCode = EnergyReason


class TelemetryUnavailable(Exception):
    """A source that cannot be read now; `reason` is its code, the message says why."""

    def __init__(self, reason: ReasonCode, message: str) -> None:
        super().__init__(message)
        self.reason: ReasonCode = reason


@dataclass(frozen=True, slots=True)
class GpuReading:
    """One GPU at one instant, as the source names it."""

    #: The GPU's id in the source's numbering: the exporter's `gpu_id`/`gpu` label, or the
    #: library's device index, as text ("0", "3").
    gpu: str
    #: The accumulated energy counter, joules; None when the source has no counter.
    energy_j: float | None
    #: Power now (or averaged by the device over its own short interval), watts; None when
    #: the source has no power reading.
    power_w: float | None


@dataclass(frozen=True, slots=True)
class Reading:
    """Every GPU a source listed at one instant (`time.perf_counter()` seconds)."""

    at_s: float
    gpus: dict[str, GpuReading]


class EnergySource(Protocol):
    """A source of GPU energy readings, read synchronously and thread-safely."""

    #: What the results record as the source: "amdsmi", "nvml" or the exporter's URL.
    name: str

    def read(self) -> Reading:
        """Every listed GPU now; raises TelemetryUnavailable when the source cannot answer."""
        ...

    def close(self) -> None:
        """Release the library or connection (idempotent)."""
        ...
