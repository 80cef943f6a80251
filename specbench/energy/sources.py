"""Which energy source a `gpu_telemetry` setting opens: "amdsmi", "nvml", an exporter's
http(s) URL, or "auto" (amdsmi, then NVML: the first that reads every counted GPU).

"off" opens nothing; `common.telemetry.check_setting` says which values are allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from specbench.common.telemetry import AUTO as AUTO
from specbench.common.telemetry import LIBRARY_NAMES
from specbench.common.telemetry import OFF as OFF
from specbench.common.telemetry import check_setting as check_setting  # re-exported
from specbench.energy.amdsmi_source import AmdSmiSource
from specbench.energy.exporter import ExporterSource
from specbench.energy.nvml_source import NvmlSource
from specbench.energy.reading import EnergySource, TelemetryUnavailable

#: The libraries "auto" tries, in `LIBRARY_NAMES`' order.
LIBRARIES: dict[str, Callable[[Sequence[str]], EnergySource]] = {
    "amdsmi": AmdSmiSource,
    "nvml": NvmlSource,
}
assert tuple(LIBRARIES) == LIBRARY_NAMES


def open_source(setting: str, gpu_ids: Sequence[str]) -> EnergySource:
    """The source an explicit setting names ("amdsmi", "nvml" or an exporter URL).

    Raises TelemetryUnavailable when its library does not open or lacks a GPU (an exporter
    is first asked at its first read), ValueError for any other setting.
    """
    problem = check_setting(setting)
    if problem is not None or setting in (AUTO, OFF):
        raise ValueError(problem or f"{setting!r} opens no source; name amdsmi, nvml or a URL")
    if setting in LIBRARIES:
        return LIBRARIES[setting](gpu_ids)
    return ExporterSource(setting, gpu_ids)


def auto_source(gpu_ids: Sequence[str]) -> tuple[EnergySource | None, str]:
    """amdsmi, then NVML: the first that opens and reads every GPU of `gpu_ids`, and why.

    With neither: None and why each failed, one phrase each (the results' `source_detail`).
    """
    failed: list[str] = []
    for name, opener in LIBRARIES.items():
        try:
            source = opener(gpu_ids)
        except TelemetryUnavailable as error:
            failed.append(f"{name}: {error}")
            continue
        try:
            reading = source.read()
        except TelemetryUnavailable as error:
            source.close()
            failed.append(f"{name}: {error}")
            continue
        missing = [gpu for gpu in gpu_ids if gpu not in reading.gpus]
        if missing:
            source.close()
            failed.append(f"{name}: did not read GPU(s) {', '.join(missing)}")
            continue
        chosen = f"auto: {name} reads GPU(s) {', '.join(gpu_ids)}"
        return source, "; ".join([chosen, *failed])
    return None, "auto: no GPU telemetry; " + "; ".join(failed)
