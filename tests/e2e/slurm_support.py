"""Helpers of the Slurm e2e tests: a one-node Slurm, emulator suites, CLI runs, waiting."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import popen_cli, run_cli

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"
TOOLS = REPO / "tools" / "slurm"


def slurm_instance(state: Path) -> Iterator[dict[str, str]]:
    """Start Slurm in `state` with tools/slurm/start.sh; yield the env; stop it with stop.sh."""
    search = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
    tools = ("slurmctld", "slurmd", "sbatch", "munged")
    missing = [tool for tool in tools if not shutil.which(tool, path=search)]
    if missing:
        pytest.fail(f"Slurm not installed ({', '.join(missing)} missing): run `make slurm`")
    started = subprocess.run(
        ["bash", str(TOOLS / "start.sh"), str(state)], capture_output=True, text=True, timeout=60
    )
    try:
        assert started.returncode == 0, started.stderr
        yield {**os.environ, "SLURM_CONF": str(state / "slurm.conf")}
    finally:
        subprocess.run(["bash", str(TOOLS / "stop.sh"), str(state)], timeout=120, check=False)
        for name in ("slurmd", "slurmctld", "munged"):
            pid_file = state / f"{name}.pid"
            if pid_file.exists():
                assert not Path(f"/proc/{pid_file.read_text().strip()}").exists(), name


def write_suite(
    folder: Path,
    *,
    step_ms: float = 1.0,
    concurrency: tuple[int, ...] = (1, 4),
    max_tokens: int = 32,
    two_workloads: bool = False,
) -> tuple[Path, str]:
    tag = uuid.uuid4().hex[:10]  # unique served model name: finds this test's servers in /proc
    folder.mkdir(parents=True, exist_ok=True)
    workloads = f"""
[[workloads]]
dataset = "{DATA}"
concurrency = {list(concurrency)}
max_tokens = {max_tokens}
warmup = 1
"""
    if two_workloads:
        second = folder / "tiny2.jsonl"
        shutil.copy(DATA, second)
        workloads += workloads.replace(str(DATA), str(second))
    suite = folder / "suite.toml"
    suite.write_text(
        f"""
name = "emu-{tag}"

[target]
engine = "emulator"
model = "emu-{tag}"
emulator = {{ prefill_ms = 2.0, step_ms = {step_ms}, per_request_step_ms = 0.05, seed = 3 }}

[servers.baseline]
baseline = true

[servers.eagle3]
speculative = {{ method = "eagle3", model = "draft", num_speculative_tokens = 3 }}
emulator = {{ acceptance = [0.8, 0.75, 0.7] }}

[slurm]
time_limit = "10:00"
sbatch_options = ["--cpus-per-task=1"]
{workloads}"""
    )
    return suite, tag


def cli(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=300, env=env)


def popen(*args: str | Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return popen_cli(*args, env=env)


def cells(root: Path) -> set[tuple[str, ...]]:
    return {p.relative_to(root).parts[:-1] for p in root.rglob("summary.json")}


def manifest(root: Path) -> dict:
    return json.loads((root / "manifest.json").read_text())


def submitter_run(root: Path) -> dict:
    """The run record of `run --executor slurm`, which the watcher (or status) closes."""
    data = manifest(root)
    return next(r for r in data["runs"] if r["id"] == data["slurm"]["run_id"])


def server_pids(tag: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "emulate" in cmdline and tag in cmdline:
                pids.append(int(entry.name))
    return pids


def stop_orphans(tag: str) -> None:
    """Servers of a SIGKILLed job: proctrack/linuxproc (this test Slurm) does not reap a
    process group that left the job; proctrack/cgroup on real clusters does."""
    for pid in server_pids(tag):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while server_pids(tag) and time.monotonic() < deadline:
        time.sleep(0.1)


def submitted_jobs(out: Path) -> int:
    if not (out / "manifest.json").exists():
        return 0
    shards = manifest(out).get("slurm", {}).get("shards", {})
    return sum(1 for shard in shards.values() if "job_id" in shard)


def wait_for(predicate, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
