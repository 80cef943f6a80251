"""`specbench emulate` on a free port (or its app in process), and processes found by a tag."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
from aiohttp.test_utils import TestServer

from harness.cli import CLI
from harness.waiting import wait_until
from specbench.emulator import EmulatorConfig, build_app


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def emulator_process(port: int, *args: str) -> subprocess.Popen[bytes]:
    """`specbench emulate --port PORT ARGS` in its own process group (`os.killpg` stops it),
    its output discarded; not waited for."""
    return subprocess.Popen(
        [*CLI, "emulate", "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@contextlib.contextmanager
def running_emulator(*args: str, ready_s: float = 60.0) -> Iterator[str]:
    """`specbench emulate ARGS` on a free port in its own process group; yields its URL."""
    port = free_port()
    process = emulator_process(port, *args)
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"the emulator exited ({process.returncode})")
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    try:
        if not wait_until(healthy, ready_s):
            raise RuntimeError("the emulator never became healthy")
        yield base
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def pids_of(*words: str) -> list[int]:
    """Live processes (not zombies, not this one) whose command line holds every word."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError, UnicodeDecodeError):
            continue
        if all(word in cmdline for word in words) and state != "Z":
            found.append(int(entry.name))
    return found


def server_pids(tag: str) -> list[int]:
    """Live emulator processes serving a run's unique model name `tag`."""
    return pids_of("emulate", tag)


@contextlib.asynccontextmanager
async def in_process_emulator(
    config: EmulatorConfig,
) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    """The emulator's app on an ephemeral local port in this event loop, with a session."""
    server = TestServer(build_app(config))
    await server.start_server()
    try:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            yield str(server.make_url("")).rstrip("/"), session
    finally:
        await server.close()
