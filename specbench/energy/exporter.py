"""GPU energy from a metrics exporter's Prometheus text: AMD's Device Metrics Exporter
(`:5000/metrics`) or NVIDIA's DCGM exporter (`:9400/metrics`).

One HTTP GET per read (urllib: the read runs on a worker thread, never on the event loop),
parsed with `prometheus_client`'s parser. Units are normalised here: the AMD counter is in
µJ, DCGM's in mJ; both power gauges are in W.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from specbench.energy.reading import GpuReading, Reading, TelemetryUnavailable


@dataclass(frozen=True, slots=True)
class ExporterMetric:
    """One exporter metric this source reads: its family name, the label that names the
    GPU, and the factor to joules (energy) or watts (power)."""

    name: str
    gpu_label: str
    to_unit: float


#: Energy counters, by exporter. AMD: µJ; DCGM: mJ since the driver loaded.
ENERGY_METRICS = (
    ExporterMetric("gpu_energy_consumed", "gpu_id", 1e-6),
    ExporterMetric("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "gpu", 1e-3),
)
#: Power gauges in W, the preferred first: MI3xx report package power, older AMD GPUs
#: only `gpu_power_usage`.
POWER_METRICS = (
    ExporterMetric("gpu_package_power", "gpu_id", 1.0),
    ExporterMetric("gpu_power_usage", "gpu_id", 1.0),
    ExporterMetric("DCGM_FI_DEV_POWER_USAGE", "gpu", 1.0),
)
#: DCGM also names each GPU by its UUID, so NVML-style ids ("GPU-…") can be counted.
UUID_LABEL = "UUID"


def metrics_url(url: str) -> str:
    """The URL read: `url` itself, or its `/metrics` when it names no path."""
    parts = urllib.parse.urlsplit(url)
    return parts._replace(path="/metrics").geturl() if parts.path in ("", "/") else url


def parse_exporter_text(text: str, url: str) -> dict[str, dict[str, dict[str, float]]]:
    """Metric family → GPU id → {each name of that GPU → value}, for the metrics read here.

    A GPU's names are its id label's value and, under DCGM, its UUID. A counter without the
    `_total` suffix comes back from the parser renamed `<name>_total` while its family keeps
    the plain name, so samples are taken by family. Raises TelemetryUnavailable
    ("unavailable") when the text is not Prometheus exposition, carries none of the known
    metrics, or lists one GPU twice in one metric.
    """
    known = {m.name: m for m in (*ENERGY_METRICS, *POWER_METRICS)}
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as error:
        raise TelemetryUnavailable(
            "unavailable", f"{url} did not answer Prometheus text exposition ({error})"
        ) from error
    found: dict[str, dict[str, dict[str, float]]] = {}
    for family in families:
        metric = known.get(family.name)
        if metric is None:
            continue
        by_gpu = found.setdefault(family.name, {})
        for sample in family.samples:
            if sample.name.endswith("_created"):
                continue
            gpu = sample.labels.get(metric.gpu_label)
            if gpu is None:
                continue
            if gpu in by_gpu:
                raise TelemetryUnavailable(
                    "unavailable",
                    f"{url} lists GPU {gpu} twice in {family.name} (label sets differ "
                    "beyond the GPU); cannot tell which series is the board",
                )
            names = {gpu: sample.value}
            if UUID_LABEL in sample.labels:
                names[sample.labels[UUID_LABEL]] = sample.value
            by_gpu[gpu] = names
    if not found:
        expected = ", ".join(sorted(known))
        raise TelemetryUnavailable(
            "unavailable", f"{url} lists none of the GPU energy or power metrics ({expected})"
        )
    return found


def first_value(
    found: dict[str, dict[str, dict[str, float]]], metrics: Iterable[ExporterMetric], gpu: str
) -> float | None:
    """The first of `metrics` that lists `gpu` (by its id or UUID), in joules or watts."""
    for metric in metrics:
        for names in found.get(metric.name, {}).values():
            if gpu in names:
                return names[gpu] * metric.to_unit
    return None


def reading_from_text(text: str, url: str, gpu_ids: Sequence[str], at_s: float) -> Reading:
    """The requested GPUs found in one scrape; a GPU the exporter does not list is absent."""
    found = parse_exporter_text(text, url)
    gpus: dict[str, GpuReading] = {}
    for gpu in gpu_ids:
        energy = first_value(found, ENERGY_METRICS, gpu)
        power = first_value(found, POWER_METRICS, gpu)
        if energy is not None or power is not None:
            gpus[gpu] = GpuReading(gpu=gpu, energy_j=energy, power_w=power)
    return Reading(at_s=at_s, gpus=gpus)


class ExporterSource:
    """An AMD Device Metrics Exporter or DCGM exporter, read by one GET per reading."""

    def __init__(self, url: str, gpu_ids: Sequence[str], timeout_s: float = 2.0) -> None:
        self.name = url
        self.url = metrics_url(url)
        self.gpu_ids = tuple(gpu_ids)
        self.timeout_s = timeout_s

    def read(self) -> Reading:
        """Every requested GPU the exporter lists now."""
        at_s = time.perf_counter()
        try:
            with urllib.request.urlopen(self.url, timeout=self.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            raise TelemetryUnavailable(
                "unreachable", f"{self.url} answered HTTP {error.code} {error.reason}"
            ) from error
        except (urllib.error.URLError, OSError) as error:
            why = getattr(error, "reason", None) or error
            raise TelemetryUnavailable(
                "unreachable", f"{self.url} could not be read (timeout {self.timeout_s:g} s): {why}"
            ) from error
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as error:
            raise TelemetryUnavailable(
                "unavailable", f"{self.url} answered bytes that are not UTF-8 text"
            ) from error
        return reading_from_text(text, self.url, self.gpu_ids, at_s)

    def close(self) -> None:
        """Nothing is held between reads."""
