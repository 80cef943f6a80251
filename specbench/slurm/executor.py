"""Submit the shards that still miss cells, then watch their jobs until every one has ended.

A rerun submits only shards with missing cells whose current job is not still pending or
running (that one is watched instead). A job that ends failed (node failure, time limit,
OOM, cancelled, cells failed) is resubmitted up to `retries` times; its cells that landed
stay, the new job measures only what is missing. Interrupting the watch cancels nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.measure.cell import utc_now
from specbench.run.campaign import suite_hash
from specbench.slurm import paths
from specbench.slurm.shards import Shard, ShardBy, plan_shards
from specbench.slurm.state import is_final, query
from specbench.slurm.status import CampaignStatus, collect_status, record_campaign
from specbench.slurm.submit import JobCommand, batch_script, require_sbatch, sbatch
from specbench.store.manifest import load_manifest, update_manifest
from specbench.suite import SlurmSettings, Suite

#: Folders that are local to each machine on a real cluster.
NODE_LOCAL_ROOTS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


@dataclass(frozen=True)
class SlurmRun:
    """A Slurm campaign request: the shards, the job options, and how to wait."""

    output: Path
    settings: SlurmSettings
    shard_by: ShardBy = "server"
    servers: tuple[str, ...] = ()
    shard_patterns: tuple[str, ...] = ()
    retries: int = 0
    detach: bool = False
    poll_interval_s: float = 5.0
    force: bool = False
    fail_fast: bool = False
    max_restarts: int = 2
    vllm_bin: str | None = None
    ready_timeout_s: float = 1800.0
    api_key_env: str | None = None


class SlurmWatcher:
    """Events of a Slurm campaign; the CLI subclasses it to draw the jobs table."""

    def warn(self, message: str) -> None:
        """Something the user should know that does not stop the run."""

    def submitted(self, shard: str, job_id: str, attempt: int) -> None:
        """A shard's job was accepted by sbatch."""

    def skipped(self, shard: str, reason: str) -> None:
        """A shard was not submitted: complete, or its job is still queued or running."""

    def update(self, status: CampaignStatus) -> None:
        """A fresh view of jobs and cells, once per poll."""


def node_local_warning(output: Path) -> str | None:
    """A warning when the results dir sits where other nodes cannot see it."""
    for root in NODE_LOCAL_ROOTS:
        if output == root or root in output.parents:
            return (
                f"--output {output} is under {root}: on a real cluster the compute nodes do "
                "not see it; use a shared filesystem"
            )
    return None


def run_on_slurm(
    suite: Suite, run: SlurmRun, watcher: SlurmWatcher | None = None
) -> CampaignStatus:
    """Submit what is missing, then (unless detached) watch until every job has ended."""
    watcher = watcher or SlurmWatcher()
    require_sbatch()
    output = run.output.expanduser().resolve()
    warning = node_local_warning(output)
    if warning:
        watcher.warn(warning)
    all_shards = plan_shards(suite, run.shard_by, run.servers)
    chosen = plan_shards(suite, run.shard_by, run.servers, run.shard_patterns)
    _claim(output, suite, run, all_shards)
    recorded = load_manifest(output).get("slurm", {}).get("shards", {})
    current = {
        s.id: str(recorded[s.id]["job_id"]) for s in chosen if recorded.get(s.id, {}).get("job_id")
    }
    live = query(current.values()).jobs
    attempts = {s.id: len(recorded.get(s.id, {}).get("jobs", {})) for s in chosen}
    watched: list[Shard] = []
    for shard in chosen:
        job_id = current.get(shard.id)
        known = live.get(job_id) if job_id else None
        if known is not None and not is_final(known.state):
            watcher.skipped(shard.id, f"job {job_id} is {known.state.lower()}; watching it")
            watched.append(shard)
        elif not run.force and not shard.missing(suite, output):
            watcher.skipped(shard.id, "complete")
        else:
            attempts[shard.id] += 1
            try:
                _submit(suite, run, output, shard, attempts[shard.id], watcher, force=run.force)
            except SpecbenchError as error:
                if not watched:
                    raise
                # Say what already runs: those jobs are not cancelled.
                raise SpecbenchError(
                    f"{error} (shards already submitted keep running: "
                    f"{', '.join(s.id for s in watched)}; see `specbench status {output}`)"
                ) from None
            watched.append(shard)
    if run.detach or not watched:
        return collect_status(output)
    status = _watch(suite, run, output, watched, attempts, watcher)
    record_campaign(suite, output)
    return status


def describe_plan(suite: Suite, run: SlurmRun) -> str:
    """The shards that would be submitted, with their missing cells and batch scripts."""
    output = run.output.expanduser().resolve()
    shards = plan_shards(suite, run.shard_by, run.servers, run.shard_patterns)
    lines = [f"slurm: {len(shards)} shard(s) by {run.shard_by} into {output}"]
    for shard in shards:
        missing = len(shard.missing(suite, output))
        lines.append(f"  {shard.id}: {len(shard.cells)} cells, {missing} missing")
    for shard in shards:
        script = paths.script_file(output, shard.file_name)
        text = batch_script(
            run.settings,
            _job_command(run, output, shard, force=run.force),
            _job_name(suite, shard),
            paths.log_pattern(output, shard.file_name),
        )
        lines += [f"--- {script}", text.rstrip()]
    return "\n".join(lines)


def _job_command(run: SlurmRun, output: Path, shard: Shard, *, force: bool) -> JobCommand:
    return JobCommand(
        output=output,
        shard=shard.id,
        server=shard.server,
        workload_index=shard.workload_index,
        force=force,
        fail_fast=run.fail_fast,
        max_restarts=run.max_restarts,
        vllm_bin=run.vllm_bin,
        ready_timeout_s=run.ready_timeout_s,
        api_key_env=run.api_key_env,
    )


def _job_name(suite: Suite, shard: Shard) -> str:
    return f"specbench-{suite.name}-{shard.file_name}"


def _claim(output: Path, suite: Suite, run: SlurmRun, shards: list[Shard]) -> None:
    """Refuse another suite's results; save the suite and the shard plan for jobs and status."""
    digest = suite_hash(suite)
    existing = load_manifest(output).get("suite_hash")
    if existing and existing != digest:
        raise SpecbenchError(
            f"{output}: holds results of a different suite (hash {existing[:12]}, this one "
            f"{digest[:12]}); use a new --output"
        )
    paths.write_suite(output, suite)
    update_manifest(
        output,
        created_at=utc_now(),
        suite=suite.model_dump(mode="json"),
        suite_hash=digest,
        slurm={
            "shard_by": run.shard_by,
            "settings": run.settings.model_dump(mode="json"),
            "shard_ids": [shard.id for shard in shards],
            "shards": {
                shard.id: {
                    "server": shard.server,
                    "workload": shard.workload_index,
                    "cells": [cell.key for cell in shard.cells],
                }
                for shard in shards
            },
        },
    )


def _submit(
    suite: Suite,
    run: SlurmRun,
    output: Path,
    shard: Shard,
    attempt: int,
    watcher: SlurmWatcher,
    *,
    force: bool = False,
) -> str:
    script = paths.script_file(output, shard.file_name)
    command = _job_command(run, output, shard, force=force)
    log_pattern = paths.log_pattern(output, shard.file_name)
    text = batch_script(run.settings, command, _job_name(suite, shard), log_pattern)
    store.write_atomic(script, text)
    script.chmod(0o755)
    paths.log_file(output, shard.file_name, "0").parent.mkdir(parents=True, exist_ok=True)
    job_id = sbatch(script)
    update_manifest(
        output,
        slurm={
            "shards": {
                shard.id: {
                    "job_id": job_id,
                    "script": str(script),
                    "jobs": {
                        job_id: {
                            "attempt": attempt,
                            "submitted_at": utc_now(),
                            "state": "PENDING",
                            "log_path": str(paths.log_file(output, shard.file_name, job_id)),
                        }
                    },
                }
            }
        },
    )
    watcher.submitted(shard.id, job_id, attempt)
    return job_id


def _watch(
    suite: Suite,
    run: SlurmRun,
    output: Path,
    watched: list[Shard],
    attempts: dict[str, int],
    watcher: SlurmWatcher,
) -> CampaignStatus:
    ids = {shard.id for shard in watched}
    by_id = {shard.id: shard for shard in watched}
    first_attempt = dict(attempts)
    while True:
        status = collect_status(output)
        watcher.update(status)
        rows = [row for row in status.shards if row.shard in ids]
        retry = [
            row
            for row in rows
            if row.category == "failed"
            and attempts[row.shard] - first_attempt[row.shard] < run.retries
            and row.cells_done < row.cells_total
        ]
        for row in retry:
            attempts[row.shard] += 1
            _submit(suite, run, output, by_id[row.shard], attempts[row.shard], watcher)
        if not retry and all(row.category in ("done", "failed") for row in rows):
            return status
        time.sleep(run.poll_interval_s)
