"""`specbench emulate` as a real process: CLI validation, start on a port, serve, stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import orjson
import pytest

CLI = [sys.executable, "-m", "specbench.cli.main", "emulate"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http(
    url: str, body: dict[str, object] | None = None, timeout: float = 5.0
) -> tuple[int, bytes]:
    data = None if body is None else orjson.dumps(body)
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, response.read()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["--acceptance", "0.8,0.75"],
            "--acceptance has 2 values but --num-speculative-tokens is 3",
        ),
        (["--acceptance", "0.8,1.2,0.7"], "outside [0, 1]"),
        (["--acceptance", "0.8,x,0.7"], "'x' is not a number"),
        (["--corrupt-rate", "-0.1"], "--corrupt-rate"),
    ],
)
def test_cli_rejects_bad_options_with_one_line_and_exit_2(args: list[str], fragment: str) -> None:
    result = subprocess.run(
        [*CLI, "--port", str(free_port()), *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and fragment in lines[0]


@pytest.fixture
def emulator_process() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    process = subprocess.Popen(
        [
            *CLI,
            "--port",
            str(port),
            "--model",
            "e2e-model",
            "--prefill-ms",
            "2",
            "--step-ms",
            "1",
            "--num-speculative-tokens",
            "2",
            "--acceptance",
            "1,1",
            "--seed",
            "5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def wait_healthy(process: subprocess.Popen[bytes], base: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            if http(f"{base}/health", timeout=1.0)[0] == 200:
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("emulator never became healthy")


def test_process_serves_and_stops_on_sigterm(
    emulator_process: tuple[subprocess.Popen[bytes], str],
) -> None:
    process, base = emulator_process
    wait_healthy(process, base)
    status, raw = http(f"{base}/v1/models")
    assert status == 200
    assert orjson.loads(raw)["data"][0]["id"] == "e2e-model"
    status, raw = http(
        f"{base}/v1/completions",
        {"model": "e2e-model", "prompt": "hello there", "max_tokens": 7, "temperature": 0},
    )
    body = orjson.loads(raw)
    assert body["usage"]["completion_tokens"] == 7
    # Acceptance 1,1: every decode step accepts both drafts, so 1 prefill token + 2 steps of 3.
    assert body["metrics"]["speculative_decoding"]["acceptance_histogram"] == [0, 0, 2]
    metrics = http(f"{base}/metrics")[1].decode()
    assert 'vllm:spec_decode_num_drafts_total{engine="0",model_name="e2e-model"} 2.0' in metrics

    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 0
    assert time.monotonic() - started < 5
    with pytest.raises(OSError):
        http(f"{base}/health", timeout=1.0)


def test_port_in_use_is_a_one_line_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [*CLI, "--port", str(port)], capture_output=True, text=True, timeout=60
        )
    assert result.returncode == 2
    assert f"--port {port}: cannot listen" in result.stderr
