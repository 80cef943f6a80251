"""GPU energy from AMD SMI's Python library (`amdsmi`, PyPI; it loads ROCm's
`libamd_smi.so`, so it works only on a ROCm node).

`amdsmi` is imported when a source is opened, never when this module is: most machines
that run specbench have no ROCm. The energy counter is `energy_accumulator` ×
`counter_resolution` µJ (`power` × `counter_resolution` before amdsmi 6.2.1); power is
`current_socket_power` W, or `average_socket_power` where the GPU reports no current
value ("N/A"). Some AMD GPUs have a broken energy counter: the window's cross-check with
sampled power is what shows it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence
from typing import Any

from specbench.energy.library import device_index, import_library, one_line
from specbench.energy.reading import GpuReading, Reading, TelemetryUnavailable

#: The accumulator key, newest first (amdsmi 6.2.1 renamed `power` to `energy_accumulator`).
ACCUMULATOR_KEYS = ("energy_accumulator", "power")
#: Power keys of `amdsmi_get_power_info`, the preferred first.
POWER_KEYS = ("current_socket_power", "average_socket_power")
INSTALL_HINT = "pip install 'specbench[amd]' on a ROCm node"


def energy_joules(counter: dict[str, Any]) -> float | None:
    """Joules from one `amdsmi_get_energy_count` answer; None when it has no accumulator."""
    resolution = counter.get("counter_resolution")
    for key in ACCUMULATOR_KEYS:
        value = counter.get(key)
        if isinstance(value, int | float) and isinstance(resolution, int | float):
            return value * resolution * 1e-6
    return None


def power_watts(info: dict[str, Any]) -> float | None:
    """Watts from one `amdsmi_get_power_info` answer; None when every key says "N/A"."""
    for key in POWER_KEYS:
        value = info.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


class AmdSmiSource:
    """The GPUs `gpu_ids` (amdsmi's device indices, as text) through amdsmi."""

    name = "amdsmi"

    def __init__(self, gpu_ids: Sequence[str]) -> None:
        self.gpu_ids = tuple(gpu_ids)
        self.amdsmi = import_library("amdsmi", INSTALL_HINT)
        error_type = getattr(self.amdsmi, "AmdSmiException", Exception)
        self.error: type[BaseException] = error_type
        # One library handle, two threads (the window's edges, the sampler): one call at a time.
        self.lock = threading.Lock()
        self.open = False
        try:
            self.amdsmi.amdsmi_init()
            self.open = True
            handles = list(self.amdsmi.amdsmi_get_processor_handles())
        except error_type as error:
            self.close()
            raise TelemetryUnavailable(
                "unavailable",
                f"amdsmi did not initialise (is the amdgpu driver loaded?): {one_line(error)}",
            ) from error
        try:
            self.handles = {
                gpu: handles[device_index(gpu, len(handles), "amdsmi")] for gpu in gpu_ids
            }
        except TelemetryUnavailable:
            self.close()
            raise

    def read(self) -> Reading:
        """Every requested GPU now; a figure the device does not give is None."""
        with self.lock:
            at_s = time.perf_counter()
            gpus = {gpu: self.read_gpu(gpu, handle) for gpu, handle in self.handles.items()}
        return Reading(at_s=at_s, gpus=gpus)

    def read_gpu(self, gpu: str, handle: object) -> GpuReading:
        """One device's counter and power; a call the device refuses gives None."""
        try:
            energy = energy_joules(self.amdsmi.amdsmi_get_energy_count(handle))
        except self.error:
            energy = None
        try:
            power = power_watts(self.amdsmi.amdsmi_get_power_info(handle))
        except self.error:
            power = None
        return GpuReading(gpu=gpu, energy_j=energy, power_w=power)

    def close(self) -> None:
        """Shut the library down, once."""
        with self.lock:
            if not self.open:
                return
            self.open = False
            # shutting down a library that failed is not worth a failed cell
            with contextlib.suppress(self.error):
                self.amdsmi.amdsmi_shut_down()
