"""`specbench emulate` as a real process: CLI validation, start on a port, serve, stop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator

import orjson
import pytest
from harness import CLI, free_port

EMULATE = [*CLI, "emulate"]
LABELS = 'engine="0",model_name="specbench-emulator"'


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
        (["--reasoning-tokens", "1"], "cannot hold both <think> and </think>"),
        (["--reasoning-output", "xml"], "--reasoning-output"),
        (["--per-request-spec-decode-metrics", "full"], "expected none, summary or detailed"),
    ],
)
def test_cli_rejects_bad_options_with_one_line_and_exit_2(args: list[str], fragment: str) -> None:
    result = subprocess.run(
        [*EMULATE, "--port", str(free_port()), *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and fragment in lines[0]


@contextlib.contextmanager
def emulator(*args: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`specbench emulate ARGS` on a free port, in its own process group, always torn down."""
    port = free_port()
    process = subprocess.Popen(
        [*EMULATE, "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


@pytest.fixture
def emulator_process() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    with emulator(
        "--model", "e2e-model", "--prefill-ms", "2", "--step-ms", "1",
        "--num-speculative-tokens", "2", "--acceptance", "1,1", "--seed", "5",
    ) as running:  # fmt: skip
        yield running


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
            [*EMULATE, "--port", str(port)], capture_output=True, text=True, timeout=60
        )
    assert result.returncode == 2
    assert f"--port {port}: cannot listen" in result.stderr


async def _stream_all(base: str, concurrency: int, max_tokens: int) -> list[list[int]]:
    import aiohttp

    body = {
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        "return_token_ids": True,
    }

    async def one(session: aiohttp.ClientSession, i: int) -> list[int]:
        messages = [{"role": "user", "content": f"load {i}"}]
        async with session.post(
            f"{base}/v1/chat/completions", json={**body, "messages": messages}
        ) as response:
            assert response.status == 200
            ids: list[int] = []
            async for line in response.content:
                if line.startswith(b"data: {"):
                    chunk = orjson.loads(line[6:])
                    if chunk["choices"]:
                        ids.extend(chunk["choices"][0].get("token_ids") or [])
            return ids

    timeout = aiohttp.ClientTimeout(total=120)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        return await asyncio.gather(*(one(session, i) for i in range(concurrency)))


def test_sustains_256_concurrent_streams() -> None:
    with emulator("--prefill-ms", "5", "--step-ms", "5", "--per-request-step-ms", "0.02") as (
        process,
        base,
    ):
        wait_healthy(process, base)
        started = time.monotonic()
        outputs = asyncio.run(_stream_all(base, 256, 64))
        wall_s = time.monotonic() - started
        metrics = http(f"{base}/metrics")[1].decode()
    assert [len(ids) for ids in outputs] == [64] * 256
    assert f"vllm:generation_tokens_total{{{LABELS}}} {256 * 64}.0" in metrics
    success = (
        'vllm:request_success_total{engine="0",finished_reason="length",'
        'model_name="specbench-emulator"}'
    )
    assert f"{success} 256.0" in metrics
    # The time model alone is ~0.25 s (about 23 steps of ~10 ms); the rest is the
    # client and server sharing two cores. Generous: this checks nothing stalls.
    assert wall_s < 20
