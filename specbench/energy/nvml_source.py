"""GPU energy from NVML (`nvidia-ml-py`, module `pynvml`).

`pynvml` is imported when a source is opened, never when this module is. The counter is
`nvmlDeviceGetTotalEnergyConsumption` (mJ since the driver loaded; Volta and later), power
`nvmlDeviceGetPowerUsage` (mW). A GPU is named by its NVML index ("0") or its UUID
("GPU-…", as `nvidia-smi -L` prints it). NVML numbers every GPU of the machine, whatever
CUDA_VISIBLE_DEVICES says.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence

from specbench.energy.library import device_index, import_library, one_line
from specbench.energy.reading import GpuReading, Reading, TelemetryUnavailable

INSTALL_HINT = "pip install 'specbench[nvidia]' on a node with the NVIDIA driver"
#: UUID prefixes NVML accepts: a whole GPU, or a MIG instance.
UUID_PREFIXES = ("GPU-", "MIG-")


class NvmlSource:
    """The GPUs `gpu_ids` (NVML indices or UUIDs) through NVML."""

    name = "nvml"

    def __init__(self, gpu_ids: Sequence[str]) -> None:
        self.gpu_ids = tuple(gpu_ids)
        self.pynvml = import_library("pynvml", INSTALL_HINT)
        self.error: type[BaseException] = self.pynvml.NVMLError
        # One library, two threads (the window's edges, the sampler): one call at a time.
        self.lock = threading.Lock()
        self.open = False
        try:
            self.pynvml.nvmlInit()
            self.open = True
            count = int(self.pynvml.nvmlDeviceGetCount())
        except self.error as error:
            self.close()
            raise TelemetryUnavailable(
                "unavailable",
                f"NVML did not initialise (is the NVIDIA driver loaded?): {one_line(error)}",
            ) from error
        try:
            self.handles = {gpu: self.handle(gpu, count) for gpu in self.gpu_ids}
        except TelemetryUnavailable:
            self.close()
            raise

    def handle(self, gpu: str, count: int) -> object:
        """The NVML handle of `gpu`; TelemetryUnavailable("no_device") when NVML has none."""
        by_uuid = gpu.startswith(UUID_PREFIXES)
        index = None if by_uuid else device_index(gpu, count, "NVML")
        try:
            if index is not None:
                return self.pynvml.nvmlDeviceGetHandleByIndex(index)
            # Bytes: older nvidia-ml-py passes the argument to C as it is.
            return self.pynvml.nvmlDeviceGetHandleByUUID(gpu.encode())
        except self.error as error:
            raise TelemetryUnavailable(
                "no_device", f"NVML gives no GPU {gpu}: {one_line(error)}"
            ) from error

    def read(self) -> Reading:
        """Every requested GPU now; a figure the device does not give is None."""
        with self.lock:
            at_s = time.perf_counter()
            gpus = {gpu: self.read_gpu(gpu, handle) for gpu, handle in self.handles.items()}
        return Reading(at_s=at_s, gpus=gpus)

    def read_gpu(self, gpu: str, handle: object) -> GpuReading:
        """One device's counter and power; NotSupported (pre-Volta counter) gives None."""
        try:
            energy: float | None = self.pynvml.nvmlDeviceGetTotalEnergyConsumption(handle) * 1e-3
        except self.error:
            energy = None
        try:
            power: float | None = self.pynvml.nvmlDeviceGetPowerUsage(handle) * 1e-3
        except self.error:
            power = None
        return GpuReading(gpu=gpu, energy_j=energy, power_w=power)

    def close(self) -> None:
        """Shut NVML down, once."""
        with self.lock:
            if not self.open:
                return
            self.open = False
            # a library that fails to shut down has nothing left to give
            with contextlib.suppress(self.error):
                self.pynvml.nvmlShutdown()
