"""Submit the shards that still miss cells, then watch their jobs until every one has ended.

Before anything is written, every dataset the missing cells use is loaded and validated
(as `run` does before any server starts), so bad data costs no queue time. The submitter
then holds the results directory (`store.lock.submitter_lock`): a local run or a second
submitter on the same directory is refused, the campaign's own jobs are not. Slurm is
asked (`sbatch --test-only`) whether each shard's job could run at all: a partition,
account, time limit or GPU request no node satisfies is one line before anything is
submitted. A job that cannot open its log (the results directory is not visible from its
node) stops the watch with one line: retrying elsewhere would not help.

A rerun submits only shards with missing cells whose current job is not still pending or
running (that one is watched instead). A job that ends failed (node failure, time limit,
OOM, cancelled, cells failed) is resubmitted up to `retries` times; its cells that landed
stay, the new job measures only what is missing. Interrupting the watch cancels nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.run.plan import RunOptions
from specbench.run.preflight import preflight_slurm
from specbench.run.resume import check_suite_resume, with_suite
from specbench.slurm import paths
from specbench.slurm.resources import gpu_request
from specbench.slurm.secrets import check_arguments, server_secrets
from specbench.slurm.shards import Shard, ShardBy, plan_shards
from specbench.slurm.sharedfs import lock_warning
from specbench.slurm.state import is_final, query
from specbench.slurm.status import (
    CampaignStatus,
    ShardStatus,
    collect_status,
    record_campaign,
)
from specbench.slurm.submit import batch_script, check_with_test_only, require_sbatch, sbatch
from specbench.store.lock import submitter_lock
from specbench.store.manifest import Manifest, new_run, read_manifest, update_manifest, utc_now
from specbench.suite import SlurmSettings, Suite
from specbench.suite.model import workload_keys

#: Folders that are local to each machine on a real cluster.
NODE_LOCAL_ROOTS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


@dataclass(frozen=True)
class SlurmRun:
    """A Slurm campaign request: the run options every job gets, the shards, how to wait."""

    options: RunOptions
    settings: SlurmSettings
    shard_by: ShardBy = "server"
    shard_patterns: tuple[str, ...] = ()
    retries: int = 0
    detach: bool = False
    poll_interval_s: float = 5.0

    @property
    def output(self) -> Path:
        return self.options.output.expanduser().resolve()


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
    output = run.output
    for warning in (node_local_warning(output), lock_warning(output)):
        if warning:
            watcher.warn(warning)
    all_shards = plan_shards(
        suite, run.shard_by, run.options.servers, workloads=run.options.workloads
    )
    chosen = preflight_submission(suite, run)
    with submitter_lock(output, utc_now()):
        check_requests(suite, run, output, chosen)
        return _submit_and_watch(suite, run, output, all_shards, chosen, watcher)


def preflight_submission(suite: Suite, run: SlurmRun) -> list[Shard]:
    """The submitter's checks before any sbatch, and the whole of `--dry-run`'s: secrets
    passed as arguments, every dataset of a missing cell, results of a changed suite.
    Returns the shards chosen."""
    check_arguments(suite)
    chosen = plan_shards(
        suite, run.shard_by, run.options.servers, run.shard_patterns, run.options.workloads
    )
    check_workloads(suite, run.output, chosen, force=run.options.force)
    check_suite_resume(read_manifest(run.output), suite, run.output, force=run.options.force)
    return chosen


def check_workloads(suite: Suite, output: Path, shards: list[Shard], *, force: bool) -> None:
    """The preflight of the shards' missing cells, before any sbatch (`preflight_slurm`)."""
    preflight_slurm(
        suite,
        [
            cell
            for shard in shards
            for cell in (shard.cells if force else shard.missing(suite, output))
        ],
    )


def check_requests(suite: Suite, run: SlurmRun, output: Path, shards: list[Shard]) -> None:
    """`sbatch --test-only` on the script of each shard that will be submitted (once per
    distinct GPU request): what Slurm would refuse is one line before any submission."""
    asked: set[tuple[str, ...]] = set()
    for shard in shards:
        if not run.options.force and not shard.missing(suite, output):
            continue
        request = gpu_request(suite, shard.server, run.settings).directives
        if request not in asked:
            asked.add(request)
            name = paths.script_file(output, shard.file_name).name
            check_with_test_only(name, _script(suite, run, shard))


def _script(suite: Suite, run: SlurmRun, shard: Shard) -> str:
    """The batch script of one shard's job (its GPU request from its server)."""
    output = run.output
    return batch_script(
        run.settings,
        output,
        shard.id,
        _job_name(suite, shard),
        paths.log_pattern(output, shard.file_name),
        sorted(server_secrets(suite, shard.server)),
        gpu_request(suite, shard.server, run.settings).directives,
    )


def _submit_and_watch(
    suite: Suite,
    run: SlurmRun,
    output: Path,
    all_shards: list[Shard],
    chosen: list[Shard],
    watcher: SlurmWatcher,
) -> CampaignStatus:
    _claim(output, suite, run, all_shards)
    manifest = read_manifest(output)
    recorded = ((manifest.slurm if manifest else None) or {}).get("shards", {})
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
        elif not run.options.force and not shard.missing(suite, output):
            watcher.skipped(shard.id, "complete")
        else:
            attempts[shard.id] += 1
            try:
                _submit(
                    suite, run, output, shard, attempts[shard.id], watcher, force=run.options.force
                )
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
    """The shards that would be submitted, with their missing cells and batch scripts,
    once they pass the submitter's preflight."""
    output = run.output
    shards = preflight_submission(suite, run)
    lines = [f"slurm: {len(shards)} shard(s) by {run.shard_by} into {output}"]
    for shard in shards:
        missing = len(shard.missing(suite, output))
        request = gpu_request(suite, shard.server, run.settings).describe()
        lines.append(f"  {shard.id}: {len(shard.cells)} cells, {missing} missing; GPUs: {request}")
    for shard in shards:
        script = paths.script_file(output, shard.file_name)
        options = _job_options(suite, run, shard, force=run.options.force)
        lines += [f"--- {script}", _script(suite, run, shard).rstrip()]
        lines += [f"--- {paths.options_file(output, shard.file_name)}", options.model_dump_json()]
    return "\n".join(lines)


def _job_options(suite: Suite, run: SlurmRun, shard: Shard, *, force: bool) -> RunOptions:
    """The run options of one shard's job: the submitter's, restricted to the shard."""
    output = run.output
    workloads = run.options.workloads
    log_dir = None
    if shard.workload_index is not None:
        workloads = (workload_keys(suite.workloads)[shard.workload_index],)
        # A server's workload shards may run at once on several nodes: a log each.
        log_dir = output / "logs" / shard.file_name
    return run.options.model_copy(
        update={
            "output": output,
            "force": force,
            "servers": (shard.server,),
            "workloads": workloads,
            "log_dir": log_dir,
            "endpoints": {},
        }
    )


def _job_name(suite: Suite, shard: Shard) -> str:
    return f"specbench-{suite.name}-{shard.file_name}"


def _claim(output: Path, suite: Suite, run: SlurmRun, shards: list[Shard]) -> None:
    """Refuse another suite's results; save the suite and the shard plan for jobs and status."""
    record = new_run("run --executor slurm")

    check_suite_resume(read_manifest(output), suite, output, force=run.options.force)

    def claim(manifest: Manifest) -> Manifest:
        return (
            with_suite(manifest, suite)
            .with_run(record)
            .with_slurm(
                {
                    "run_id": record.id,
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
                }
            )
        )

    update_manifest(output, claim)
    paths.write_suite(output, suite)


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
    options = _job_options(suite, run, shard, force=force)
    store.write_atomic(paths.options_file(output, shard.file_name), options.model_dump_json())
    secrets = server_secrets(suite, shard.server)
    store.write_atomic(script, _script(suite, run, shard))
    script.chmod(0o755)
    paths.log_file(output, shard.file_name, "0").parent.mkdir(parents=True, exist_ok=True)
    # The secrets travel in sbatch's environment, which it exports to the job.
    job_id = sbatch(script, env={**os.environ, **secrets})
    update_manifest(
        output,
        lambda m: m.with_slurm(
            {
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
            }
        ),
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
        for row in rows:
            _check_reached_results(row, output)
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


def _check_reached_results(row: ShardStatus, output: Path) -> None:
    """A job that failed before it started and left no log: its node cannot see `output`."""
    if (
        row.state.startswith("FAILED")
        and not row.reached
        and row.log_path
        and not Path(row.log_path).exists()
    ):
        raise SpecbenchError(
            f"--output {output}: job {row.job_id} of shard {row.shard} could not open its log "
            f"on node {row.node or '?'} ({row.reason or 'no reason given'}): the results "
            "directory is not visible (or not writable) there; put it on a filesystem every "
            f"compute node mounts (jobs already running go on: `specbench status {output}`)"
        )
