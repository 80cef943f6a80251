"""The emulator's GPU metrics exporter: the power model's reads as an AMD Device Metrics
Exporter or an NVIDIA DCGM exporter would serve them at `/metrics`.

AMD: `gpu_energy_consumed` (µJ, accumulated), `gpu_package_power` and `gpu_power_usage` (W),
labelled `gpu_id`, `serial_number`, `hostname`. DCGM: `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`
(mJ counter) and `DCGM_FI_DEV_POWER_USAGE` (W), labelled `gpu`, `UUID`, `Hostname`,
`modelName`. It listens on its own port (`--exporter-port`) beside the API, in the same
process, reading the same engine's counters.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from aiohttp import web
from prometheus_client.utils import floatToGoString

from specbench.common.emulator_settings import ExporterFormat
from specbench.emulator.config import EmulatorConfig
from specbench.emulator.power import GpuSample, PowerMeter, PowerModel

#: What a scrape answers: Prometheus text format 0.0.4, as both exporters serve it.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: The DCGM `modelName` label of every emulated GPU.
DCGM_MODEL_NAME = "NVIDIA H100 80GB HBM3"

_Series = tuple[str, str, str, Callable[[GpuSample], float]]

_AMD_SERIES: tuple[_Series, ...] = (
    (
        "gpu_energy_consumed",
        "gauge",
        "Accumulated energy consumed (uJ)",
        lambda s: s.energy_j * 1e6,
    ),
    ("gpu_package_power", "gauge", "Current socket power (W)", lambda s: s.power_w),
    ("gpu_power_usage", "gauge", "Power usage (W)", lambda s: s.power_w),
)
_DCGM_SERIES: tuple[_Series, ...] = (
    (
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "counter",
        "Total energy consumption since boot (in mJ).",
        lambda s: s.energy_j * 1e3,
    ),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", lambda s: s.power_w),
)


def _labels(fmt: ExporterFormat, gpu: int, hostname: str) -> str:
    """One GPU's label set in the exporter's own names."""
    if fmt == "amd":
        return f'gpu_id="{gpu}",serial_number="EMU{gpu:012d}",hostname="{hostname}"'
    uuid = f"GPU-00000000-0000-0000-0000-{gpu:012d}"
    return f'gpu="{gpu}",UUID="{uuid}",modelName="{DCGM_MODEL_NAME}",Hostname="{hostname}"'


def exposition(samples: dict[int, GpuSample], fmt: ExporterFormat, hostname: str) -> bytes:
    """The exporter's Prometheus text for one read (µJ for `amd`, mJ for `dcgm`)."""
    lines: list[str] = []
    for name, kind, doc, value in _AMD_SERIES if fmt == "amd" else _DCGM_SERIES:
        lines += [f"# HELP {name} {doc}", f"# TYPE {name} {kind}"]
        lines += [
            f"{name}{{{_labels(fmt, gpu, hostname)}}} {floatToGoString(value(sample))}"
            for gpu, sample in sorted(samples.items())
        ]
    return ("\n".join(lines) + "\n").encode()


def build_exporter_app(
    config: EmulatorConfig, token_totals: Callable[[], tuple[float, float]]
) -> web.Application:
    """The exporter as an aiohttp application; `token_totals` gives the engine's generated
    and drafted tokens so far (`EmulatorMetrics.token_totals`)."""
    meter = PowerMeter(
        PowerModel.from_config(config),
        time.monotonic,
        config.exporter_fault,
        config.exporter_fault_after_reads,
    )
    fmt, hostname = config.exporter_format, socket.gethostname()

    async def metrics(request: web.Request) -> web.Response:
        samples = meter.read(*token_totals())
        if samples is None:
            return web.Response(status=503, text="exporter unavailable (emulated fault)\n")
        return web.Response(
            body=exposition(samples, fmt, hostname), headers={"Content-Type": CONTENT_TYPE}
        )

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    return app
