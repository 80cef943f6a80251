"""Processes for `run_bench.py`: servers and clients pinned to cores, client CPU time.

Every process is started in its own session (process group) and stopped by that group,
so a benchmark never leaves a server behind. Clients run as separate processes, pinned
with `taskset`, so their CPU time can be read from `/proc/<pid>/stat` while they run.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def pinned(argv: Sequence[str], core: int | None) -> list[str]:
    """`taskset -c CORE argv...` (taskset execs, so the PID is the program's own)."""
    if core is None or shutil.which("taskset") is None or (os.cpu_count() or 1) < 2:
        return list(argv)
    return ["taskset", "-c", str(core), *argv]


def start(
    argv: Sequence[str], log: Path, *, core: int | None = None, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    log.parent.mkdir(parents=True, exist_ok=True)
    handle = log.open("wb")
    try:
        return subprocess.Popen(
            pinned(argv, core),
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    finally:
        handle.close()


def stop(process: subprocess.Popen[bytes], grace_s: float = 20.0) -> None:
    """SIGTERM the process group, then SIGKILL it if it lingers."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def get_json(url: str, timeout_s: float = 2.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        return json.loads(response.read())


def wait_ready(url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    """Poll `url` until it answers 200; fail fast (quoting the log) if the process dies."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace").splitlines()[-30:]
            raise RuntimeError(f"server exited ({process.returncode}):\n" + "\n".join(tail))
        try:
            with urllib.request.urlopen(url, timeout=2.0) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"{url} not ready after {timeout_s:g} s (log: {log})")


def run_client(
    argv: Sequence[str], log: Path, *, core: int | None, timeout_s: float = 600.0
) -> tuple[float, float]:
    """Run a client to completion; return (its CPU seconds, wall seconds).

    CPU comes from `getrusage(RUSAGE_CHILDREN)` around the wait: user + system time of
    the client and anything it waited for, and of nothing else (servers are reaped later).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    process = start(argv, log, core=core)
    try:
        process.wait(timeout=timeout_s)
    finally:
        stop(process)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-30:]
        raise RuntimeError(f"{argv[0]} failed ({process.returncode}):\n" + "\n".join(tail))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def process_cpu_s(pid: int) -> float:
    """utime + stime of one live process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def watch_client(
    argv: Sequence[str],
    log: Path,
    *,
    core: int | None,
    stats_url: str,
    expected_requests: int,
    interval_s: float = 0.02,
    timeout_s: float = 600.0,
) -> dict[str, float]:
    """Run a client against the blast server; its CPU time over the streaming window only.

    The window opens at the first streamed request the server sees (the warm-up) and
    closes at the first `/metrics` GET after the last of `expected_requests` (both
    clients scrape right after their load ends), so interpreter start-up, imports, prompt
    loading and the final report are left out. Edges are sampled every `interval_s`;
    CPU ticks are 10 ms.
    """
    before = get_json(stats_url)
    process = start(argv, log, core=core)
    started = time.monotonic()
    first: tuple[float, float] | None = None
    last: tuple[float, float] | None = None
    posts_seen = before["requests"]
    metrics_at_last_post = before["metrics_gets"]
    try:
        while process.poll() is None and last is None:
            if time.monotonic() - started > timeout_s:
                raise RuntimeError(f"client ran past {timeout_s:g} s (log: {log})")
            stats = get_json(stats_url)
            try:
                cpu = process_cpu_s(process.pid)
            except (OSError, IndexError):
                break
            now = time.monotonic()
            if first is None and stats["requests"] > before["requests"]:
                first = (now, cpu)
            if stats["requests"] != posts_seen:
                posts_seen = stats["requests"]
                metrics_at_last_post = stats["metrics_gets"]
            elif (
                stats["requests"] - before["requests"] >= expected_requests
                and stats["metrics_gets"] > metrics_at_last_post
            ):
                last = (now, cpu)
            time.sleep(interval_s)
        process.wait(timeout=timeout_s)
    finally:
        stop(process)
    if process.returncode != 0 or first is None or last is None:
        tail = log.read_text(errors="replace").splitlines()[-20:]
        raise RuntimeError(
            f"{argv[0]}: no complete window ({process.returncode}):\n" + "\n".join(tail)
        )
    after = get_json(stats_url)
    chunks = after["token_chunks_sent"] - before["token_chunks_sent"]
    cpu_s, wall_s = last[1] - first[1], last[0] - first[0]
    return {
        "chunks": chunks,
        "requests": after["requests"] - before["requests"],
        "cpu_s": cpu_s,
        "wall_s": wall_s,
        "cpu_us_per_chunk": cpu_s / chunks * 1e6,
        "chunks_per_s": chunks / wall_s,
        "chunks_per_cpu_s": chunks / cpu_s,
        "cpu_utilisation": cpu_s / wall_s,
    }
