"""Results directories for the Slurm tests of `status`: what a submitter records, written by hand.

Shared by the unit tests (tests/unit/slurm) and the end-to-end ones (tests/e2e/test_slurm.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specbench.slurm.paths import write_suite as save_suite
from specbench.store.manifest import update_manifest
from specbench.suite import load_suite


def running_job(shard: str, cells: list[str], job_id: str, node: str) -> dict[str, Any]:
    """The manifest's `slurm` record of one shard, `shard`, of `cells`, whose one job
    `job_id` was last seen RUNNING on `node`."""
    return {
        "shard_ids": [shard],
        "shards": {
            shard: {
                "cells": cells,
                "job_id": job_id,
                "jobs": {job_id: {"state": "RUNNING", "node": node}},
            }
        },
    }


def record_running_job(
    out: Path, suite: Path, shard: str, cells: list[str], *, job_id: str, node: str
) -> None:
    """`out` as a submitter leaves it: `suite` saved and the record `running_job` gives."""
    save_suite(out, load_suite(suite))
    recorded = running_job(shard, cells, job_id, node)
    update_manifest(out, lambda m: m.with_slurm(recorded))
