"""ExporterSource against a real local HTTP server (http.server on a thread, a free port)
serving AMD Device Metrics Exporter text and DCGM exporter text.

The texts are laid out as each exporter's documentation shows its metrics (names, units,
labels); the values are made up, chosen so each unit conversion shows.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from specbench.energy.exporter import ExporterSource
from specbench.energy.reading import TelemetryUnavailable

AMD_TEXT = """\
# HELP gpu_energy_consumed Accumulated energy consumed by the GPU in uJ
# TYPE gpu_energy_consumed counter
gpu_energy_consumed{gpu_id="0",hostname="mi355x-01",serial_number="692251001124"} 1.5e+12
gpu_energy_consumed{gpu_id="1",hostname="mi355x-01",serial_number="692251001125"} 2.25e+12
gpu_energy_consumed{gpu_id="2",hostname="mi355x-01",serial_number="692251001126"} 3.0e+12
# HELP gpu_package_power Current socket power in W
# TYPE gpu_package_power gauge
gpu_package_power{gpu_id="0",hostname="mi355x-01",serial_number="692251001124"} 745
gpu_package_power{gpu_id="1",hostname="mi355x-01",serial_number="692251001125"} 698.5
# HELP gpu_power_usage Power usage in W
# TYPE gpu_power_usage gauge
gpu_power_usage{gpu_id="0",hostname="mi355x-01",serial_number="692251001124"} 740
gpu_power_usage{gpu_id="2",hostname="mi355x-01",serial_number="692251001126"} 310
"""

DCGM_UUID = "GPU-5a3c1d2e-0f4b-4c6d-8e9f-0123456789ab"
DCGM_TEXT = f"""\
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{{gpu="0",UUID="{DCGM_UUID}",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="h100-07"}} 312.45
DCGM_FI_DEV_POWER_USAGE{{gpu="1",UUID="GPU-0000",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="h100-07"}} 71.2
# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0",UUID="{DCGM_UUID}",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="h100-07"}} 987654321
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="1",UUID="GPU-0000",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="h100-07"}} 123456
"""  # noqa: E501

VLLM_TEXT = """\
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} 1234.0
"""


@dataclass
class Exporter:
    """What the local server answers, and the paths it was asked for."""

    url: str
    body: str = ""
    status: int = 200
    delay_s: float = 0.0
    paths: list[str] = field(default_factory=list)


@pytest.fixture
def exporter() -> Iterator[Exporter]:
    state = Exporter(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.paths.append(self.path)
            time.sleep(state.delay_s)
            payload = state.body.encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep the test output to the test's own

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_amd_micro_joules_become_joules_and_package_power_comes_first(exporter: Exporter) -> None:
    exporter.body = AMD_TEXT
    source = ExporterSource(exporter.url, ["0", "1", "2"])
    reading = source.read()
    assert source.name == exporter.url
    assert reading.gpus["0"].energy_j == pytest.approx(1.5e6)
    assert reading.gpus["1"].energy_j == pytest.approx(2.25e6)
    assert reading.gpus["0"].power_w == 745.0  # gpu_package_power, not gpu_power_usage's 740
    assert reading.gpus["1"].power_w == 698.5
    assert reading.gpus["2"].power_w == 310.0  # no package power: gpu_power_usage
    assert exporter.paths == ["/metrics"]


def test_dcgm_milli_joules_become_joules_by_index_or_uuid(exporter: Exporter) -> None:
    exporter.body = DCGM_TEXT
    reading = ExporterSource(exporter.url, ["1", DCGM_UUID]).read()
    assert reading.gpus[DCGM_UUID].energy_j == pytest.approx(987654.321)
    assert reading.gpus[DCGM_UUID].power_w == pytest.approx(312.45)
    assert reading.gpus["1"].energy_j == pytest.approx(123.456)
    assert reading.gpus["1"].power_w == pytest.approx(71.2)


def test_a_gpu_the_exporter_does_not_list_is_absent(exporter: Exporter) -> None:
    exporter.body = AMD_TEXT
    reading = ExporterSource(exporter.url, ["0", "5"]).read()
    assert sorted(reading.gpus) == ["0"]


def test_a_url_without_a_path_reads_its_metrics(exporter: Exporter) -> None:
    exporter.body = AMD_TEXT
    bare = exporter.url.removesuffix("/metrics")
    source = ExporterSource(bare, ["0"])
    assert source.read().gpus["0"].energy_j == pytest.approx(1.5e6)
    assert source.name == bare
    assert exporter.paths == ["/metrics"]


def test_connection_refused_is_unreachable() -> None:
    url = f"http://127.0.0.1:{free_port()}/metrics"
    with pytest.raises(TelemetryUnavailable) as caught:
        ExporterSource(url, ["0"]).read()
    assert caught.value.reason == "unreachable"
    assert url in str(caught.value) and "refused" in str(caught.value)


def test_an_http_error_is_unreachable(exporter: Exporter) -> None:
    exporter.status = 503
    with pytest.raises(TelemetryUnavailable) as caught:
        ExporterSource(exporter.url, ["0"]).read()
    assert caught.value.reason == "unreachable"
    assert str(caught.value) == f"{exporter.url} answered HTTP 503 Service Unavailable"


def test_a_slow_exporter_is_unreachable_after_the_timeout(exporter: Exporter) -> None:
    exporter.body, exporter.delay_s = AMD_TEXT, 1.0
    started = time.perf_counter()
    with pytest.raises(TelemetryUnavailable) as caught:
        ExporterSource(exporter.url, ["0"], timeout_s=0.2).read()
    assert caught.value.reason == "unreachable"
    assert "timed out" in str(caught.value)
    assert time.perf_counter() - started < 0.9


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("<html><body>Grafana</body></html>", "did not answer Prometheus text exposition"),
        (VLLM_TEXT, "lists none of the GPU energy or power metrics"),
    ],
)
def test_text_without_gpu_metrics_is_unavailable_naming_the_url(
    exporter: Exporter, body: str, says: str
) -> None:
    exporter.body = body
    with pytest.raises(TelemetryUnavailable) as caught:
        ExporterSource(exporter.url, ["0"]).read()
    assert caught.value.reason == "unavailable"
    assert str(caught.value).startswith(f"{exporter.url} {says}")
