"""Stand-ins for `pynvml` and `amdsmi` at the import boundary: the text of real module files
that a test writes into a folder put first on `sys.path` (or on a subprocess's PYTHONPATH).

Each keeps the library's names, units and failure types (NVMLError and its NotSupported /
DriverNotLoaded / NotFound / InvalidArgument subclasses; AmdSmiException and
AmdSmiLibraryException) and records every call in `CALLS`, so a test can check the call
sequence a source makes. A device is a dict:

- `energy`: the counter values (pynvml: mJ; amdsmi: accumulator ticks) the successive
  reads return (the last repeats), "not_supported" to raise, or absent with `watts` set:
  then the counter grows by `watts` × seconds since import, as a real one would;
- `power`: the power (pynvml: mW; amdsmi: the `current_socket_power` W or "N/A"), or
  `watts` (W) for both; `average` (amdsmi): the `average_socket_power` W;
- `uuid` (pynvml): the device's UUID.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PYNVML = '''
"""Stand-in for nvidia-ml-py's pynvml (tests/unit/energy/stand_ins.py)."""
import time

DEVICES = {devices!r}
INIT_ERROR = {init_error!r}
CALLS = []
_STARTED = time.monotonic()
_READS = {{}}


class NVMLError(Exception):
    _MESSAGES = {{2: "Invalid Argument", 3: "Not Supported", 6: "Not Found",
                 9: "Driver Not Loaded"}}

    def __init__(self, value):
        super().__init__(value)
        self.value = value

    def __str__(self):
        return self._MESSAGES.get(self.value, "Unknown Error")


class NVMLError_InvalidArgument(NVMLError):
    def __init__(self):
        super().__init__(2)


class NVMLError_NotSupported(NVMLError):
    def __init__(self):
        super().__init__(3)


class NVMLError_NotFound(NVMLError):
    def __init__(self):
        super().__init__(6)


class NVMLError_DriverNotLoaded(NVMLError):
    def __init__(self):
        super().__init__(9)


class _Handle:
    def __init__(self, index):
        self.index = index


def nvmlInit():
    CALLS.append("nvmlInit")
    if INIT_ERROR:
        raise NVMLError_DriverNotLoaded()


def nvmlShutdown():
    CALLS.append("nvmlShutdown")


def nvmlDeviceGetCount():
    CALLS.append("nvmlDeviceGetCount")
    return len(DEVICES)


def nvmlDeviceGetHandleByIndex(index):
    CALLS.append(f"nvmlDeviceGetHandleByIndex({{index}})")
    if not 0 <= index < len(DEVICES):
        raise NVMLError_InvalidArgument()
    return _Handle(index)


def nvmlDeviceGetHandleByUUID(uuid):
    CALLS.append(f"nvmlDeviceGetHandleByUUID({{uuid!r}})")
    if not isinstance(uuid, bytes):
        # what ctypes' c_char_p does with a str in the older bindings
        raise TypeError("bytes or integer address expected instead of str instance")
    for index, device in enumerate(DEVICES):
        if device.get("uuid", "").encode() == uuid:
            return _Handle(index)
    raise NVMLError_NotFound()


def _next(handle, values):
    done = _READS.get(handle.index, 0)
    _READS[handle.index] = done + 1
    return values[min(done, len(values) - 1)]


def nvmlDeviceGetTotalEnergyConsumption(handle):
    CALLS.append(f"nvmlDeviceGetTotalEnergyConsumption({{handle.index}})")
    device = DEVICES[handle.index]
    energy = device.get("energy")
    if energy == "not_supported":
        raise NVMLError_NotSupported()
    if energy is None:
        return int(device["watts"] * (time.monotonic() - _STARTED) * 1000)
    return _next(handle, energy)


def nvmlDeviceGetPowerUsage(handle):
    CALLS.append(f"nvmlDeviceGetPowerUsage({{handle.index}})")
    device = DEVICES[handle.index]
    if device.get("power") == "not_supported":
        raise NVMLError_NotSupported()
    return device["power"] if "power" in device else int(device["watts"] * 1000)
'''

AMDSMI = '''
"""Stand-in for AMD SMI's amdsmi (tests/unit/energy/stand_ins.py)."""
import time

DEVICES = {devices!r}
INIT_ERROR = {init_error!r}
ACCUMULATOR_KEY = {accumulator_key!r}
RESOLUTION_UJ = {resolution_uj!r}
CALLS = []
_STARTED = time.monotonic()
_READS = {{}}


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, err_code, err_info):
        super().__init__(f"Error code:\\n\\t{{err_code}} | {{err_info}}")
        self.err_code = err_code
        self.err_info = err_info


class _Handle:
    def __init__(self, index):
        self.index = index


def amdsmi_init(flag=None):
    CALLS.append("amdsmi_init")
    if INIT_ERROR:
        raise AmdSmiLibraryException(8, "AMDSMI_STATUS_INIT_ERROR - Initialization error")


def amdsmi_shut_down():
    CALLS.append("amdsmi_shut_down")


def amdsmi_get_processor_handles():
    CALLS.append("amdsmi_get_processor_handles")
    return [_Handle(index) for index in range(len(DEVICES))]


def amdsmi_get_energy_count(handle):
    CALLS.append(f"amdsmi_get_energy_count({{handle.index}})")
    device = DEVICES[handle.index]
    energy = device.get("energy")
    if energy == "not_supported":
        raise AmdSmiLibraryException(2, "AMDSMI_STATUS_NOT_SUPPORTED - Feature not supported")
    if energy is None:
        ticks = int(device["watts"] * (time.monotonic() - _STARTED) * 1e6 / RESOLUTION_UJ)
    else:
        done = _READS.get(handle.index, 0)
        _READS[handle.index] = done + 1
        ticks = energy[min(done, len(energy) - 1)]
    return {{ACCUMULATOR_KEY: ticks, "counter_resolution": RESOLUTION_UJ, "timestamp": 0}}


def amdsmi_get_power_info(handle):
    CALLS.append(f"amdsmi_get_power_info({{handle.index}})")
    device = DEVICES[handle.index]
    current = device.get("power", device.get("watts", "N/A"))
    return {{"current_socket_power": current,
            "average_socket_power": device.get("average", "N/A"),
            "gfx_voltage": 0, "soc_voltage": 0, "mem_voltage": 0, "power_limit": 750}}
'''

#: A library that fails at import as amdsmi does on a machine without ROCm.
BROKEN_IMPORT = '''
"""A stand-in whose import fails as the real one does without its shared library."""
raise OSError("libamd_smi.so: cannot open shared object file: No such file or directory")
'''


def write_pynvml(folder: Path, devices: list[dict[str, Any]], init_error: bool = False) -> Path:
    """`folder/pynvml.py` serving `devices`; NVML's init fails when `init_error`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pynvml.py"
    path.write_text(PYNVML.format(devices=devices, init_error=init_error))
    return path


def write_amdsmi(
    folder: Path,
    devices: list[dict[str, Any]],
    init_error: bool = False,
    accumulator_key: str = "energy_accumulator",
    resolution_uj: float = 15.3,
) -> Path:
    """`folder/amdsmi.py` serving `devices`, its counter under `accumulator_key` ("power"
    before amdsmi 6.2.1) in ticks of `resolution_uj` µJ."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "amdsmi.py"
    path.write_text(
        AMDSMI.format(
            devices=devices,
            init_error=init_error,
            accumulator_key=accumulator_key,
            resolution_uj=resolution_uj,
        )
    )
    return path
