"""What the two library sources (amdsmi, NVML) share: importing the vendor's module when a
source opens, and turning a GPU id into a device index the library lists.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from specbench.energy.reading import TelemetryUnavailable


def import_library(name: str, hint: str) -> ModuleType:
    """The library module, or TelemetryUnavailable("unavailable") saying how to install it.

    Imported here, when a source opens, and never at specbench's import: most machines that
    run specbench have neither ROCm nor an NVIDIA driver.
    """
    try:
        return importlib.import_module(name)
    # OSError: amdsmi loads libamd_smi.so with ctypes while it imports.
    except (ImportError, OSError) as error:
        raise TelemetryUnavailable(
            "unavailable", f"{name} does not import ({one_line(error)}); {hint}"
        ) from error


def device_index(gpu: str, count: int, library: str) -> int:
    """`gpu` ("0", "3") as an index below `count`; TelemetryUnavailable("no_device") else."""
    if not gpu.isdigit() or int(gpu) >= count:
        listed = f"numbered 0-{count - 1}" if count else "none"
        raise TelemetryUnavailable(
            "no_device", f"{library} lists {count} GPU(s) ({listed}); it has no GPU {gpu!r}"
        )
    return int(gpu)


def one_line(error: BaseException) -> str:
    """The error's text on one line: amdsmi's own messages hold a newline and a tab."""
    return " ".join(str(error).split())
