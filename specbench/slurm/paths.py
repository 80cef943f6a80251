"""Where a Slurm campaign keeps its own files inside the results directory.

DIR/slurm/suite.json           the resolved suite every job loads (identical for all shards;
                               secret env values redacted, see `specbench.slurm.secrets`)
DIR/slurm/jobs/<shard>.sbatch  the batch script of a shard
DIR/slurm/jobs/<shard>.json    the shard's RunOptions, which its job reads
DIR/slurm/logs/<shard>-<job>.log  a job's stdout and stderr
"""

from __future__ import annotations

from pathlib import Path

from specbench import store
from specbench.common.errors import SpecbenchError
from specbench.slurm.secrets import redacted_suite
from specbench.suite import Suite

SLURM_DIR = "slurm"


def suite_file(output: Path) -> Path:
    return output / SLURM_DIR / "suite.json"


def script_file(output: Path, shard_file_name: str) -> Path:
    return output / SLURM_DIR / "jobs" / f"{shard_file_name}.sbatch"


def options_file(output: Path, shard_file_name: str) -> Path:
    return output / SLURM_DIR / "jobs" / f"{shard_file_name}.json"


def log_pattern(output: Path, shard_file_name: str) -> Path:
    """The log path given to sbatch: `%j` becomes the job id."""
    return output / SLURM_DIR / "logs" / f"{shard_file_name}-%j.log"


def log_file(output: Path, shard_file_name: str, job_id: str) -> Path:
    return output / SLURM_DIR / "logs" / f"{shard_file_name}-{job_id}.log"


def write_suite(output: Path, suite: Suite) -> None:
    """Save the suite for the jobs, its secret env values redacted."""
    store.write_json(suite_file(output), redacted_suite(suite))


def read_suite(output: Path) -> Suite:
    """The suite a Slurm campaign in `output` was submitted with (secrets still redacted)."""
    path = suite_file(output)
    if not path.is_file():
        raise SpecbenchError(f"{output}: no {SLURM_DIR}/suite.json; not a Slurm campaign's results")
    return Suite.model_validate(store.read_json(path))
