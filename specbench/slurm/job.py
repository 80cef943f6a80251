"""Inside a Slurm job: run the campaign restricted to one shard, writing into the shared results.

`python -m specbench.slurm.job RESULTS_DIR SHARD` is what each batch script execs. It
loads the suite the submitter saved (so every shard measures the same suite; its redacted
secrets come back from the job's environment, `specbench.slurm.secrets`) and the
shard's `RunOptions` (JSON beside the script: no option is re-parsed here), records its
node and times under `slurm.shards.<shard>.jobs.<job id>` in the manifest, and runs the
plan as a local run would. SIGTERM (scancel, time limit)
is turned into an orderly stop so the servers it started are torn down.
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import socket
import sys
from pathlib import Path

from specbench import store
from specbench.common import interrupt
from specbench.common.errors import SpecbenchError
from specbench.measure.cell import CellOutcome
from specbench.run.orchestrator import RunProgress, run_plan
from specbench.run.plan import RunOptions, plan_suite
from specbench.slurm import paths
from specbench.slurm.paths import read_suite
from specbench.slurm.secrets import restore_secrets
from specbench.slurm.shards import shard_file_name
from specbench.store.manifest import update_manifest, utc_now
from specbench.suite import Cell

log = logging.getLogger("specbench.slurm.job")


class LogProgress(RunProgress):
    """Campaign events as log lines in the job's log file."""

    def begin(self, total: int, complete: int) -> None:
        log.info("%d cells in this shard, %d already complete", total, complete)

    def server(self, name: str, message: str) -> None:
        log.info("server %s: %s", name, message)

    def cell_done(self, cell: Cell, outcome: CellOutcome) -> None:
        if outcome.error:
            log.info("failed %s: %s", cell.key, outcome.error)
        elif outcome.skipped:
            log.info("skip %s: already complete", cell.key)
        else:
            log.info("done %s", cell.key)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m specbench.slurm.job")
    parser.add_argument("output", type=Path, help="Shared results directory.")
    parser.add_argument("shard", help="Shard id, as recorded in the manifest.")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run one shard; the exit code tells Slurm: 0 all cells done, 1 cells failed, 2 bad input."""
    # Line by line: a job killed outright still leaves its last lines in the log.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    logging.basicConfig(
        stream=sys.stdout, level=logging.INFO, format="%(asctime)s %(message)s", force=True
    )
    args = parse_args(argv)
    job_id = os.environ.get("SLURM_JOB_ID", "local")
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    record = f"slurm.shards.{args.shard}.jobs.{job_id}"

    def note(**fields: object) -> None:
        update = {"shards": {args.shard: {"jobs": {job_id: dict(fields)}}}}
        update_manifest(args.output, lambda m: m.with_slurm(update))

    try:
        with interrupt.stop_on_signals():
            suite = restore_secrets(
                read_suite(args.output), os.environ, paths.suite_file(args.output)
            )
            source = paths.options_file(args.output, shard_file_name(args.shard))
            options = RunOptions.parse(str(source), store.read_json(source))
            note(node=node, started_at=utc_now(), pid=os.getpid())
            log.info(
                "shard %s on %s (job %s); manifest record %s", args.shard, node, job_id, record
            )
            plan = plan_suite(suite, options, command="slurm-job")
            result = run_plan(plan, options, LogProgress())
    except interrupt.Interrupted as stop:
        log.info("%s: stopped (cancelled, time limit or preempted)", stop)
        note(finished_at=utc_now(), exit="terminated")
        return stop.exit_code
    except SpecbenchError as error:
        log.error("error: %s", error)
        note(finished_at=utc_now(), exit="error", error=str(error))
        return 2
    failed = sorted(cell.key for cell in result.failed)
    note(
        finished_at=utc_now(),
        exit="cells failed" if failed else "completed",
        cells_measured=len(result.measured),
        cells_failed=failed,
    )
    log.info("%d measured, %d failed", len(result.measured), len(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
