"""Job states from Slurm's own tools: `squeue`, then `scontrol show job`, then `sacct`.

`squeue --states=all` knows recent jobs (for `MinJobAge` after they end); `scontrol`
answers for the same window; `sacct` covers older jobs where accounting is configured. A
job none of them knows keeps the last state recorded in the manifest.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

QUERY_TIMEOUT_S = 30.0

Category = Literal["pending", "running", "done", "failed", "unknown"]

_PENDING = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"}
_RUNNING = {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "RESIZING"}
_FAILED = {
    "FAILED",
    "TIMEOUT",
    "OUT_OF_MEMORY",
    "CANCELLED",
    "NODE_FAIL",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "REVOKED",
    "SPECIAL_EXIT",
    "LOST",  # ours: Slurm has no record of the job and the job never recorded its end
}


def category(state: str | None) -> Category:
    """pending / running / done / failed for a Slurm state name (`CANCELLED by 0` too)."""
    name = (state or "").split()[0].rstrip("+") if state else ""
    if name in _PENDING:
        return "pending"
    if name in _RUNNING:
        return "running"
    if name == "COMPLETED":
        return "done"
    if name in _FAILED:
        return "failed"
    return "unknown"


def is_final(state: str | None) -> bool:
    return category(state) in ("done", "failed")


@dataclass(frozen=True)
class JobState:
    """What Slurm says about one job."""

    job_id: str
    state: str
    node: str | None = None
    reason: str | None = None
    exit_code: str | None = None
    #: Slurm's own clock (the controller's local time), once the job has started / ended.
    start_time: str | None = None
    end_time: str | None = None

    @property
    def category(self) -> Category:
        return category(self.state)


@dataclass(frozen=True)
class Answer:
    """Slurm's answer: the jobs it knows, and whether the controller answered at all."""

    jobs: dict[str, JobState]
    reachable: bool


def query(job_ids: Iterable[str]) -> Answer:
    """States of the jobs Slurm still knows, by job id; unknown ids are left out."""
    wanted = sorted(set(job_ids), key=int)
    if not wanted:
        return Answer({}, reachable=True)
    found, reachable = _squeue(wanted)
    for job_id in wanted:
        # scontrol also knows the exit code, worth one more call for a job that failed.
        if job_id not in found or found[job_id].category == "failed":
            state = _scontrol(job_id)
            if state is not None:
                found[job_id] = state
    missing = [job_id for job_id in wanted if job_id not in found]
    if missing:
        found.update(_sacct(missing))
    return Answer(found, reachable)


def _call(argv: list[str]) -> subprocess.CompletedProcess[str] | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=QUERY_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _run(argv: list[str]) -> str | None:
    result = _call(argv)
    return result.stdout if result is not None and result.returncode == 0 else None


def _squeue(job_ids: list[str]) -> tuple[dict[str, JobState], bool]:
    # One call for all ids; squeue fails outright when it knows none of them, which still
    # means the controller answered.
    result = _call(
        [
            "squeue",
            "--noheader",
            "--states=all",
            f"--jobs={','.join(job_ids)}",
            "--format=%i|%T|%N|%r|%S|%e",
        ]
    )
    if result is None:
        return {}, False
    if result.returncode != 0:
        return {}, "Invalid job id" in result.stderr
    found: dict[str, JobState] = {}
    for line in result.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 6 or parts[0] not in job_ids:
            continue
        job_id, state, node, reason, start, end = parts
        found[job_id] = JobState(
            job_id,
            state,
            node or None,
            None if reason in ("None", "") else reason,
            start_time=_time(start, state),
            end_time=_time(end, state, end=True),
        )
    return found, True


def _scontrol(job_id: str) -> JobState | None:
    out = _run(["scontrol", "show", "job", "--oneliner", job_id])
    if not out:
        return None
    fields = dict(
        item.split("=", 1) for item in out.split() if "=" in item and not item.startswith("=")
    )
    state = fields.get("JobState")
    if not state:
        return None
    node = fields.get("NodeList")
    reason = fields.get("Reason")
    return JobState(
        job_id,
        state,
        None if node in (None, "(null)") else node,
        None if reason in (None, "None") else reason,
        fields.get("ExitCode"),
        _time(fields.get("StartTime"), state),
        _time(fields.get("EndTime"), state, end=True),
    )


def _time(value: str | None, state: str, *, end: bool = False) -> str | None:
    """A Slurm time that has happened: none for a pending job (its start is a forecast) or
    the end of one still running (its time limit)."""
    if not value or value in ("Unknown", "N/A", "None") or category(state) == "pending":
        return None
    if end and category(state) == "running":
        return None
    return value


def _sacct(job_ids: list[str]) -> dict[str, JobState]:
    out = _run(
        [
            "sacct",
            "--noheader",
            "--parsable2",
            "--allocations",
            f"--jobs={','.join(job_ids)}",
            "--format=JobID,State,NodeList,ExitCode",
        ]
    )
    found: dict[str, JobState] = {}
    for line in (out or "").splitlines():
        parts = line.strip().split("|")
        if len(parts) == 4 and parts[0] in job_ids:
            node = parts[2] if parts[2] not in ("", "None assigned") else None
            found[parts[0]] = JobState(parts[0], parts[1], node, None, parts[3])
    return found
