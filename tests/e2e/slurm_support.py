"""Helpers of the Slurm e2e tests: a real Slurm of one or more nodes, emulator suites, CLI
runs (on this machine or on a node), taking a node down, waiting."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from helpers import popen_cli, run_cli

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"
TOOLS = REPO / "tools" / "slurm"


def slurm_instance(state: Path, nodes: int = 1) -> Iterator[dict[str, str]]:
    """Start Slurm of `nodes` nodes in `state` with tools/slurm/start.sh; yield the env; stop
    it with stop.sh, which must leave no daemon and no process of a node behind."""
    search = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
    tools = ("slurmctld", "slurmd", "sbatch", "munged")
    missing = [tool for tool in tools if not shutil.which(tool, path=search)]
    if missing:
        pytest.fail(f"Slurm not installed ({', '.join(missing)} missing): run `make slurm`")
    started = subprocess.run(
        ["bash", str(TOOLS / "start.sh"), str(state), "--nodes", str(nodes)],
        capture_output=True,
        text=True,
        timeout=90,
    )
    try:
        assert started.returncode == 0, started.stderr
        yield {**os.environ, "SLURM_CONF": str(state / "slurm.conf")}
    finally:
        subprocess.run(["bash", str(TOOLS / "stop.sh"), str(state)], timeout=120, check=False)
        for name in ("slurmctld", "munged"):
            pid_file = state / f"{name}.pid"
            if pid_file.exists():
                assert not Path(f"/proc/{pid_file.read_text().strip()}").exists(), name
        for node, namespace in node_namespaces(state).items():
            assert not processes_in(namespace), f"processes of {node} left running"


def node_namespaces(state: Path) -> dict[str, str]:
    """Each node's UTS namespace (`uts:[…]`), from the nodes file start.sh writes."""
    nodes = state / "nodes"
    lines = nodes.read_text().splitlines() if nodes.exists() else []
    return {fields[0]: fields[2] for fields in map(str.split, lines) if len(fields) == 3}


def processes_in(namespace: str) -> list[int]:
    """PIDs in a UTS namespace (never this machine's own: one node's Slurm has none)."""
    if namespace == os.readlink("/proc/self/ns/uts"):
        return []
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "uts") == namespace:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def slurmd_pid(state: Path, node: str) -> int:
    for fields in map(str.split, (state / "nodes").read_text().splitlines()):
        if fields[0] == node:
            return int(fields[1])
    raise AssertionError(f"no node {node} in {state}/nodes")


def on_node(state: Path, node: str, *argv: str | Path) -> list[str]:
    """An argv that runs `argv` on `node`: in its slurmd's UTS and mount namespaces."""
    target = str(slurmd_pid(state, node))
    return ["nsenter", "--target", target, "--uts", "--mount", "--", *map(str, argv)]


def kill_node(state: Path, node: str) -> None:
    """The node loses power: every process in its namespace gets SIGKILL."""
    subprocess.run(["bash", str(TOOLS / "kill-node.sh"), str(state), node], check=True, timeout=30)


def node_state(env: dict[str, str], node: str) -> str:
    result = subprocess.run(
        ["sinfo", "-h", "-N", "-n", node, "-o", "%T"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return result.stdout.strip()


def write_suite(
    folder: Path,
    *,
    step_ms: float = 1.0,
    concurrency: tuple[int, ...] = (1, 4),
    max_tokens: int = 32,
    two_workloads: bool = False,
    exclusive: bool = False,
) -> tuple[Path, str]:
    """An emulator suite (baseline, eagle3); `exclusive` gives each job a node of its own, as
    a TP = 8 server on an 8-GPU node would."""
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
    options = '["--exclusive"]' if exclusive else '["--cpus-per-task=1"]'
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
sbatch_options = {options}
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


def jobs_of(out: Path, shard: str) -> dict[str, dict]:
    """The manifest's record of every job of `shard`, by job id."""
    return manifest(out)["slurm"]["shards"][shard]["jobs"]


def moment(text: str) -> float:
    """Seconds since the epoch of a manifest time (UTC ISO-8601)."""
    return datetime.fromisoformat(text).timestamp()


def overlap_s(a: dict, b: dict) -> float:
    """Seconds two job records (started_at, finished_at) ran at the same time."""
    start = max(moment(a["started_at"]), moment(b["started_at"]))
    end = min(moment(a["finished_at"]), moment(b["finished_at"]))
    return max(0.0, end - start)
