"""Helpers of the Slurm e2e tests: a real Slurm of one or more nodes, emulator suites, CLI
runs (on this machine or on a node), taking a node down, waiting."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest
from harness import (
    DATA,
    REPO,
    background_cli,
    is_stopped,
    run_cli,
    server_pids,
    wait_for,
    write_campaign_suite,
)

from specbench.store.manifest import MANIFEST_LOCK

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


def freeze_node(state: Path, node: str) -> int:
    """The node hangs: SIGSTOP to every process in its UTS namespace, from this process (no
    shell to start, so it lands within milliseconds on a loaded machine); how many stopped.
    `kill_node` then takes it down: SIGKILL ends a stopped process too."""
    namespace = next(
        line.split()[2]
        for line in (state / "nodes").read_text().splitlines()
        if line.split()[0] == node
    )
    stopped = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "ns" / "uts") == namespace:
                os.kill(int(entry.name), signal.SIGSTOP)
                stopped += 1
        except (OSError, ProcessLookupError):
            continue
    return stopped


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
    hold: bool = False,
) -> tuple[Path, str]:
    """An emulator suite (baseline, eagle3) with a `[slurm]` table; (its path, its unique
    served model name, which finds this test's servers in /proc). `exclusive` gives each
    job a node of its own, as a TP = 8 server on an 8-GPU node would; `hold` submits each
    job held (sbatch --hold): PENDING until the test releases it (`release_jobs`)."""
    folder.mkdir(parents=True, exist_ok=True)
    datasets = [DATA]
    if two_workloads:
        datasets.append(folder / "tiny2.jsonl")
        shutil.copy(DATA, datasets[-1])
    options = ["--exclusive" if exclusive else "--cpus-per-task=1"] + (["--hold"] if hold else [])
    return write_campaign_suite(
        folder,
        step_ms=step_ms,
        concurrency=concurrency,
        max_tokens=max_tokens,
        datasets=datasets,
        repeats=None,
        servers_extra=(
            f'\n[slurm]\ntime_limit = "10:00"\nsbatch_options = {json.dumps(options)}\n'
        ),
    )


def cli(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=300, env=env)


def slurm_run(suite: Path, out: Path, *extra: str | Path) -> tuple[str | Path, ...]:
    """`run SUITE --output OUT --executor slurm`, watching the jobs every 0.3 s, then `extra`."""
    return ("run", suite, "--output", out, "--executor", "slurm", "--poll-interval", "0.3", *extra)


def cells(root: Path) -> set[tuple[str, ...]]:
    return {p.relative_to(root).parts[:-1] for p in root.rglob("summary.json")}


def manifest(root: Path) -> dict:
    return json.loads((root / "manifest.json").read_text())


def submitter_run(root: Path) -> dict:
    """The run record of `run --executor slurm`, which the watcher (or status) closes."""
    data = manifest(root)
    return next(r for r in data["runs"] if r["id"] == data["slurm"]["run_id"])


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


def jobs_of(out: Path, shard: str) -> dict[str, dict]:
    """The manifest's record of every job of `shard`, by job id."""
    return manifest(out)["slurm"]["shards"][shard]["jobs"]


def jobs_story(out: Path) -> str:
    """What the jobs of `out` recorded and logged, for an assertion's message: a failed job
    in CI leaves nothing else (the test's folder is gone with the machine)."""
    lines = [json.dumps(manifest(out).get("slurm", {}).get("shards", {}), indent=1)]
    for log in sorted((out / "slurm" / "logs").glob("*.log")):
        lines += [f"--- {log.name}", *log.read_text().splitlines()[-20:]]
    for failure in sorted(out.rglob("failure.json")):
        lines += [f"--- {failure.relative_to(out)}", failure.read_text()]
    return "\n".join(lines)


def release_jobs(env: dict[str, str], job_ids: Sequence[str]) -> None:
    """`scontrol release`: held jobs (`write_suite(hold=True)`) may start."""
    subprocess.run(["scontrol", "release", ",".join(job_ids)], env=env, check=True, timeout=30)


def _current_job(out: Path, shard: str) -> dict:
    entry = manifest(out)["slurm"]["shards"][shard]
    return entry["jobs"].get(entry["job_id"], {})


def _stop(pids: list[int]) -> None:
    """SIGSTOP to each of `pids`; return once each is stopped."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    wait_for(lambda: all(map(is_stopped, pids)), 30)


def thaw(pids: dict[str, int]) -> None:
    """SIGCONT to each frozen job (`frozen_jobs`); one that ended meanwhile is passed over."""
    for pid in pids.values():
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            continue


@contextmanager
def frozen_jobs(
    out: Path, shards: Sequence[str], timeout_s: float = 180.0
) -> Iterator[dict[str, int]]:
    """Each shard's current job stopped mid-run for the block (SIGSTOP to the job's specbench
    process, whose pid it records with its start); yields those pids; `thaw` on the way out.

    The moment is chosen under the manifest's lock, which a job takes to record its start
    and its end: once every job has recorded its start and none its end, read while no job
    can write, each is stopped before the lock is let go. So Slurm has every job RUNNING and
    none can end until it is thawed, however loaded the machine and however long the
    commands in the block take; and no job is stopped holding the lock a rerun needs (one
    waiting for it is stopped in the wait, and waits again once thawed).
    """
    wait_for(lambda: submitted_jobs(out) >= len(shards), timeout_s)
    deadline = time.monotonic() + timeout_s
    while True:
        with (out / MANIFEST_LOCK).open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            jobs = {shard: _current_job(out, shard) for shard in shards}
            if all("started_at" in job for job in jobs.values()):
                ended = {shard: job for shard, job in jobs.items() if "finished_at" in job}
                assert not ended, f"ended before they could be frozen: {ended}"
                pids = {shard: int(job["pid"]) for shard, job in jobs.items()}
                _stop(list(pids.values()))
                break
        assert time.monotonic() < deadline, f"jobs not all started: {jobs}"
        time.sleep(0.05)
    try:
        yield pids
    finally:
        thaw(pids)


def rerun_watching(
    args: Sequence[str | Path], env: dict[str, str], frozen: dict[str, int], log: Path
) -> subprocess.CompletedProcess[str]:
    """`specbench ARGS` in the background while `frozen`'s jobs are stopped; once it says it
    watches each (`skip SHARD: job ID is …; watching it`), `thaw` them and let it finish.
    Its stderr goes through the file `log`, read as it runs."""

    def watching_or_ended() -> bool:
        return log.read_text().count("; watching it") == len(frozen) or process.poll() is not None

    with log.open("w") as sink, background_cli(*args, env=env, stderr=sink) as process:
        wait_for(watching_or_ended)
        thaw(frozen)
        stdout, _ = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, log.read_text())


def moment(text: str) -> float:
    """Seconds since the epoch of a manifest time (UTC ISO-8601)."""
    return datetime.fromisoformat(text).timestamp()


def overlap_s(a: dict, b: dict) -> float:
    """Seconds two job records (started_at, finished_at) ran at the same time."""
    start = max(moment(a["started_at"]), moment(b["started_at"]))
    end = min(moment(a["finished_at"]), moment(b["finished_at"]))
    return max(0.0, end - start)
