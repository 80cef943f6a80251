"""`specbench emulate --exporter-port`: a real emulator process serves a GPU metrics exporter
whose energy counters move exactly as its power model says, against the engine's own
`/metrics` counters (issue 41, part 4: the truth the energy reader is tested against)."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request

import orjson
import pytest
from harness import CLI, free_port, running_emulator
from prometheus_client.parser import text_string_to_metric_families

from specbench.emulator.config import make_emulator_config
from specbench.emulator.truth import window_energy_j

IDLE_W = 100.0
J_PER_GENERATED = 0.05
J_PER_DRAFTED = 0.03
GPUS = 8
WORK_GPUS = (0, 1, 2, 3)
POWER_ARGS = (
    "--exporter-gpus", str(GPUS), "--exporter-work-gpus", ",".join(map(str, WORK_GPUS)),
    "--power-idle-w", str(IDLE_W), "--energy-per-generated-token-j", str(J_PER_GENERATED),
    "--energy-per-drafted-token-j", str(J_PER_DRAFTED),
)  # fmt: skip
FAST_STEPS = ("--prefill-ms", "2", "--step-ms", "1", "--num-speculative-tokens", "3")
#: Each format's energy counter (as prometheus_client names its samples), its unit in J,
#: its power gauge and its GPU label.
FORMATS = {
    "amd": ("gpu_energy_consumed", 1e-6, "gpu_package_power", "gpu_id"),
    "dcgm": ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total", 1e-3, "DCGM_FI_DEV_POWER_USAGE", "gpu"),
}


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def _samples(text: str) -> dict[tuple[str, str], float]:
    """(sample name, GPU id or '') → value; vLLM's series summed over their label sets."""
    samples: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            gpu = sample.labels.get("gpu_id", sample.labels.get("gpu", ""))
            key = (sample.name, gpu)
            samples[key] = samples.get(key, 0.0) + sample.value
    return samples


def _complete(base: str, prompt: str, max_tokens: int) -> None:
    body = {"model": "specbench-emulator", "prompt": prompt, "max_tokens": max_tokens}
    request = urllib.request.Request(
        f"{base}/v1/completions", orjson.dumps(body), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        usage = orjson.loads(response.read())["usage"]
    assert usage["completion_tokens"] == max_tokens


@pytest.mark.parametrize("fmt", ["amd", "dcgm"])
def test_the_exporter_counters_move_by_the_power_model_of_the_engines_counters(fmt: str) -> None:
    energy_name, joules_per_unit, power_name, _ = FORMATS[fmt]
    exporter_port = free_port()
    exporter = f"http://127.0.0.1:{exporter_port}/metrics"
    args = ("--exporter-port", str(exporter_port), "--exporter-format", fmt)
    with running_emulator(*FAST_STEPS, *args, *POWER_ARGS) as base:
        before_s = time.monotonic()
        first = _samples(_get(exporter))
        first_done_s = time.monotonic()
        metrics_before = _samples(_get(f"{base}/metrics"))
        for prompt in range(6):
            _complete(base, f"prompt number {prompt}", 40)
        metrics_after = _samples(_get(f"{base}/metrics"))
        second_sent_s = time.monotonic()
        second = _samples(_get(exporter))
        after_s = time.monotonic()

    generated = metrics_after[("vllm:generation_tokens_total", "")]
    generated -= metrics_before[("vllm:generation_tokens_total", "")]
    drafted = metrics_after[("vllm:spec_decode_num_draft_tokens_total", "")]
    drafted -= metrics_before[("vllm:spec_decode_num_draft_tokens_total", "")]
    assert generated == 6 * 40
    # K = 3 per decode step; a step emits at least one token, so at most 39 steps a request.
    assert 0 < drafted <= 6 * 39 * 3 and drafted % 3 == 0

    delta_j = {
        gpu: (second[(energy_name, str(gpu))] - first[(energy_name, str(gpu))]) * joules_per_unit
        for gpu in range(GPUS)
    }
    # An idle GPU's counter gives the time between the two reads, as the exporter saw it; it
    # lies within what the client saw around them.
    window_s = delta_j[GPUS - 1] / IDLE_W
    assert second_sent_s - first_done_s - 1e-3 <= window_s <= after_s - before_s + 1e-3
    # Counters start big (since driver load), each GPU's apart.
    assert first[(energy_name, "1")] * joules_per_unit == pytest.approx(1.001e9, rel=1e-6)

    config = make_emulator_config(
        port=1,
        exporter_port=2,
        exporter_gpus=GPUS,
        exporter_work_gpus="0,1,2,3",
        power_idle_w=IDLE_W,
        energy_per_generated_token_j=J_PER_GENERATED,
        energy_per_drafted_token_j=J_PER_DRAFTED,
    )
    expected_j = window_energy_j(config, window_s, generated, drafted, range(GPUS))
    assert sum(delta_j.values()) == pytest.approx(expected_j, abs=1e-4)
    work_j = (J_PER_GENERATED * generated + J_PER_DRAFTED * drafted) / len(WORK_GPUS)
    for gpu in WORK_GPUS:
        assert delta_j[gpu] == pytest.approx(IDLE_W * window_s + work_j, abs=1e-4)
        # Power at the second read: that GPU's energy since the first over the time since.
        assert second[(power_name, str(gpu))] == pytest.approx(delta_j[gpu] / window_s)
    assert second[(power_name, "5")] == pytest.approx(IDLE_W)
    # The first read has no interval behind it: idle watts.
    assert first[(power_name, "0")] == IDLE_W


def test_an_unreachable_exporter_answers_503_from_its_nth_read_on() -> None:
    exporter_port = free_port()
    exporter = f"http://127.0.0.1:{exporter_port}/metrics"
    fault = ("--exporter-fault", "unreachable", "--exporter-fault-after-reads", "3")
    with running_emulator("--exporter-port", str(exporter_port), *fault) as base:
        statuses = []
        for _ in range(4):
            try:
                _get(exporter)
                statuses.append(200)
            except urllib.error.HTTPError as error:
                statuses.append(error.code)
        # The API is not part of the fault.
        assert "vllm:generation_tokens_total" in _get(f"{base}/metrics")
    assert statuses == [200, 200, 503, 503]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--exporter-format", "dcgm"], "--exporter-format needs --exporter-port"),
        (
            ["--exporter-port", "9400", "--exporter-work-gpus", "0,8"],
            "GPU 8 is not listed (--exporter-gpus 8 lists ids 0 to 7)",
        ),
        (["--exporter-port", "9400", "--exporter-fault", "flaky"], "--exporter-fault"),
    ],
)
def test_bad_exporter_settings_exit_2_with_one_line(args: list[str], fragment: str) -> None:
    result = subprocess.run(
        [*CLI, "emulate", "--port", str(free_port()), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and fragment in lines[0]


def test_an_exporter_port_in_use_is_a_one_line_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [*CLI, "emulate", "--port", str(free_port()), "--exporter-port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"--exporter-port {port}: cannot listen" in lines[0]
