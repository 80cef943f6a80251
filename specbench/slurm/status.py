"""The state of a Slurm campaign: each shard's job (from Slurm, else the manifest) and its cells.

Cells are counted on disk (`summary.json` marks a complete cell, `failure.json` a failed
one), so the table shows results as they land. A state Slurm reports is written back into
the manifest: `squeue` forgets finished jobs after a while, the manifest keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.launch.health import log_tail
from specbench.run.cells import cell_directory
from specbench.slurm import state as slurm_state
from specbench.slurm.paths import read_suite
from specbench.store.manifest import Manifest, read_manifest, update_manifest, utc_now
from specbench.suite import Cell, Suite

LOG_TAIL_LINES = 12
NOT_SUBMITTED = "NOT SUBMITTED"
#: A job Slurm answers it has no record of, which never recorded its own end: it is gone.
LOST = "LOST"

#: What a job's own last record says, for a job Slurm no longer knows.
_EXIT_TO_STATE = {
    "completed": "COMPLETED",
    "cells failed": "FAILED",
    "error": "FAILED",
    "terminated": "CANCELLED",
}


@dataclass(frozen=True)
class Attempt:
    """One job of a shard, as the manifest recorded it."""

    job_id: str
    attempt: int
    state: str
    node: str | None
    started_at: str | None
    finished_at: str | None

    @classmethod
    def of(cls, job_id: str, job: dict[str, Any]) -> Attempt:
        return cls(
            job_id=job_id,
            attempt=int(job.get("attempt") or 0),
            state=str(job.get("state") or "UNKNOWN"),
            node=job.get("node"),
            started_at=job.get("started_at") or job.get("start_time"),
            finished_at=job.get("finished_at") or job.get("end_time"),
        )


@dataclass(frozen=True)
class ShardStatus:
    """One row of the jobs table."""

    shard: str
    job_id: str | None
    state: str
    node: str | None
    cells_done: int
    cells_failed: int
    cells_total: int
    attempts: int
    log_path: str | None = None
    reason: str | None = None
    exit_code: str | None = None
    #: The job's own record of its start and end (UTC), else Slurm's times.
    started_at: str | None = None
    finished_at: str | None = None
    #: Whether the job itself recorded its start (it reached the results directory).
    reached: bool = False
    #: Earlier attempts of the shard (a job lost with its node, a failed one), oldest first.
    earlier: tuple[Attempt, ...] = ()

    @property
    def category(self) -> slurm_state.Category:
        complete = self.cells_done == self.cells_total
        if self.job_id is None:
            return "done" if complete else "unknown"
        category = slurm_state.category(self.state)
        # Cells completed by a later local run make an old failed job moot.
        return "done" if category == "failed" and complete else category

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> list[str]:
        if not self.log_path or not Path(self.log_path).is_file():
            return []
        return log_tail(Path(self.log_path), 0, lines)


@dataclass(frozen=True)
class CampaignStatus:
    """Every shard of the latest plan, and the cell totals."""

    output: Path
    suite_name: str
    shards: list[ShardStatus] = field(default_factory=list)

    @property
    def cells_done(self) -> int:
        return sum(s.cells_done for s in self.shards)

    @property
    def cells_total(self) -> int:
        return sum(s.cells_total for s in self.shards)

    def count(self, category: slurm_state.Category) -> int:
        return sum(1 for s in self.shards if s.job_id and s.category == category)

    @property
    def active(self) -> list[ShardStatus]:
        return [s for s in self.shards if s.category in ("pending", "running")]

    @property
    def failed(self) -> list[ShardStatus]:
        return [s for s in self.shards if s.category == "failed"]


def is_campaign(manifest: Manifest | None) -> bool:
    """Whether the manifest records a Slurm campaign (its shards)."""
    slurm = manifest.slurm if manifest else None
    return isinstance(slurm, dict) and bool(slurm.get("shard_ids"))


def collect_status(output: Path, *, record: bool = True) -> CampaignStatus:
    """Read the plan from the manifest, ask Slurm about current jobs, count cells on disk."""
    if not output.is_dir():
        raise SpecbenchError(f"{output}: no such results directory")
    manifest = read_manifest(output)
    if manifest is None or not is_campaign(manifest):
        raise SpecbenchError(f"{output}: no Slurm campaign recorded in manifest.json")
    slurm: dict[str, Any] = manifest.slurm or {}
    suite = read_suite(output)
    cells = {cell.key: cell for cell in suite.expand()}
    shards: dict[str, Any] = slurm.get("shards", {})
    current = {
        shard_id: str(shards[shard_id]["job_id"])
        for shard_id in slurm["shard_ids"]
        if shards.get(shard_id, {}).get("job_id")
    }
    answer = slurm_state.query(
        job_id
        for shard_id, job_id in current.items()
        if not slurm_state.is_final(shards[shard_id]["jobs"].get(job_id, {}).get("state"))
    )
    rows = []
    updates: dict[str, Any] = {}
    for shard_id in slurm["shard_ids"]:
        entry = shards.get(shard_id, {})
        shard_cells = [cells[key] for key in entry.get("cells", []) if key in cells]
        done, failed = _count(shard_cells, output)
        job_id = current.get(shard_id)
        job: dict[str, Any] = entry.get("jobs", {}).get(job_id, {}) if job_id else {}
        known = answer.jobs.get(job_id) if job_id else None
        if known is not None:
            fresh = {
                "state": known.state,
                "node": known.node or job.get("node"),
                "reason": known.reason,
                "exit_code": known.exit_code or job.get("exit_code"),
                "start_time": known.start_time or job.get("start_time"),
                "end_time": known.end_time or job.get("end_time"),
            }
            if any(job.get(key) != value for key, value in fresh.items()):
                updates[shard_id] = {"jobs": {job_id: fresh}}
            job = {**job, **fresh}
        mine = Attempt.of(job_id, job) if job_id else None
        earlier = [
            Attempt.of(other, record)
            for other, record in entry.get("jobs", {}).items()
            if other != job_id
        ]
        rows.append(
            ShardStatus(
                shard=shard_id,
                job_id=job_id,
                state=_state(job, known is not None, answer.reachable) if job_id else NOT_SUBMITTED,
                node=job.get("node"),
                cells_done=done,
                cells_failed=failed,
                cells_total=len(shard_cells),
                attempts=len(entry.get("jobs", {})),
                log_path=job.get("log_path"),
                reason=job.get("reason"),
                exit_code=job.get("exit_code"),
                started_at=mine.started_at if mine else None,
                finished_at=mine.finished_at if mine else None,
                reached=bool(job.get("started_at")),
                earlier=tuple(sorted(earlier, key=lambda a: (a.attempt, len(a.job_id), a.job_id))),
            )
        )
    if record and updates:
        update_manifest(output, lambda m: m.with_slurm({"shards": updates}))
    ended = all(row.category in ("done", "failed") for row in rows)
    submitted = manifest.run(str(slurm.get("run_id"))) if manifest else None
    recorded_cells = submitted.cells_measured if submitted else []
    if record and ended and len(recorded_cells) != sum(row.cells_done for row in rows):
        # A detached campaign has nobody else to close the submitter's run record.
        record_campaign(suite, output)
    return CampaignStatus(output=output, suite_name=suite.name, shards=rows)


def record_campaign(suite: Suite, output: Path) -> None:
    """Close the submitter's run record over every cell on disk (each job records its own)."""
    completed, failed = [], []
    for cell in suite.expand():
        directory = cell_directory(output, cell)
        if store.is_complete(directory):
            completed.append(cell.key)
        elif (directory / store.FAILURE).is_file():
            failed.append(cell.key)

    def close(manifest: Manifest) -> Manifest:
        run = manifest.run(str((manifest.slurm or {}).get("run_id")))
        if run is None:
            return manifest
        finished = run.model_copy(
            update={
                "finished_at": utc_now(),
                "status": "cells failed" if failed else "completed",
                "cells_measured": sorted(completed),
                "cells_failed": sorted(failed),
            }
        )
        return manifest.with_run(finished)

    update_manifest(output, close)


def _state(job: dict[str, Any], slurm_knows: bool, slurm_answered: bool) -> str:
    recorded = job.get("state")
    if slurm_knows or slurm_state.is_final(recorded):
        return str(recorded)
    finished = _EXIT_TO_STATE.get(str(job.get("exit")))
    if finished and job.get("finished_at"):
        # Slurm forgot the job (or was never asked again): the job's own last word.
        return finished
    if slurm_answered:
        return LOST
    return f"{recorded or 'UNKNOWN'}?"  # Slurm did not answer: the last state seen


def _count(cells: list[Cell], output: Path) -> tuple[int, int]:
    done = failed = 0
    for cell in cells:
        directory = cell_directory(output, cell)
        if store.is_complete(directory):
            done += 1
        elif (directory / store.FAILURE).is_file():
            failed += 1
    return done, failed
