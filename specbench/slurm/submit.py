"""Write a shard's batch script and hand it to `sbatch`: the only place that submits.

The script is plain sbatch: `#SBATCH` lines from `[slurm]`, the setup lines, then
`python -m specbench.slurm.job` (under the launcher, e.g. a container line), which reads
the shard's `RunOptions` from the JSON file beside the script. Secrets are in neither
file: sbatch gets them in its environment and passes them on to the job
(`specbench.slurm.secrets`). Nothing here schedules: Slurm decides where and when each
job runs.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.suite import SlurmSettings

SBATCH_TIMEOUT_S = 60.0


def job_argv(python: str, output: Path, shard: str) -> list[str]:
    """What the job execs: it reads its `RunOptions` from the shard's options file."""
    return [python, "-m", "specbench.slurm.job", str(output), shard]


def sbatch_directives(
    settings: SlurmSettings, job_name: str, log_path: Path, gpus: Sequence[str] | None = None
) -> list[str]:
    """The `#SBATCH` options of one job, in a fixed order; `gpus` is the shard's GPU
    request (`resources.gpu_request`), None for `[slurm]`'s as written.

    `--no-requeue` comes last unless the options ask `--requeue`: a job lost with its node
    is retried by specbench (`--retries`) under a job id of its own, so the manifest keeps
    the lost attempt.
    """
    options = [f"--job-name={job_name}", f"--output={log_path}", f"--nodes={settings.nodes}"]
    written = (
        ("--partition", settings.partition),
        ("--account", settings.account),
        ("--time", settings.time_limit),
    )
    options += [f"{flag}={value}" for flag, value in written if value]
    if gpus is not None:
        options.extend(gpus)
    elif settings.gpus_per_node:
        options.append(f"--gpus-per-node={settings.gpus_per_node}")
    elif settings.gres:
        options.append(f"--gres={settings.gres}")
    if settings.constraint:
        options.append(f"--constraint={settings.constraint}")
    options.extend(settings.sbatch_options)
    if "--requeue" not in settings.sbatch_options:
        options.append("--no-requeue")
    return options


def batch_script(
    settings: SlurmSettings,
    output: Path,
    shard: str,
    job_name: str,
    log_path: Path,
    secrets: Sequence[str] = (),
    gpus: Sequence[str] | None = None,
) -> str:
    """The full batch script of one shard's job; `secrets` names the variables it inherits,
    `gpus` is its GPU request."""
    python = settings.python or sys.executable
    argv = shlex.join(job_argv(python, output, shard))
    run = f"{settings.launcher} {argv}" if settings.launcher else argv
    lines = ["#!/bin/bash"]
    directives = sbatch_directives(settings, job_name, log_path, gpus)
    lines += [f"#SBATCH {option}" for option in directives]
    lines.append(
        "# Written by specbench run --executor slurm; resubmitting it runs the same shard."
    )
    if secrets:
        lines.append(
            f"# The job reads {', '.join(secrets)} from its environment (redacted in "
            "slurm/suite.json): export them before resubmitting by hand."
        )
    lines += [
        "set -eo pipefail",
        f'echo "specbench shard {shard}: job $SLURM_JOB_ID on $(hostname)"',
    ]
    if settings.setup:
        lines += ["# setup from [slurm].setup", settings.setup.rstrip()]
    lines.append(f"exec {run}")
    return "\n".join(lines) + "\n"


def require_sbatch() -> str:
    """The sbatch executable, or one line saying it is missing."""
    path = shutil.which("sbatch")
    if path is None:
        raise SpecbenchError(
            "--executor slurm: sbatch not found on PATH; run on a Slurm login node "
            "(or install Slurm's client tools)"
        )
    return path


def _call_sbatch(
    argv: list[str], name: str, text: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            input=text,
            capture_output=True,
            text=True,
            timeout=SBATCH_TIMEOUT_S,
            check=False,
            env=None if env is None else dict(env),
        )
    except subprocess.TimeoutExpired:
        raise SpecbenchError(
            f"sbatch {name}: no answer in {SBATCH_TIMEOUT_S:.0f} s (is slurmctld up?)"
        ) from None


def _refusal(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    return "; ".join(lines) or "no message"


def check_with_test_only(name: str, text: str) -> None:
    """Ask Slurm whether the batch script `text` could run (`sbatch --test-only`: a
    partition, account, time limit or GPU request no node can satisfy is refused) without
    submitting it; a refusal is one line."""
    result = _call_sbatch([require_sbatch(), "--test-only"], name, text)
    if result.returncode != 0:
        raise SpecbenchError(
            f"sbatch refused {name} (asked with --test-only, nothing submitted): {_refusal(result)}"
        )


def sbatch(script: Path, extra: Sequence[str] = (), env: Mapping[str, str] | None = None) -> str:
    """Submit `script` (sbatch and the job see `env`, default this process's environment);
    return the job id. Slurm's refusal is quoted in one line."""
    argv = [require_sbatch(), "--parsable", *extra, str(script)]
    result = _call_sbatch(argv, script.name, env=env)
    if result.returncode != 0:
        raise SpecbenchError(f"sbatch refused {script.name}: {_refusal(result)}")
    # --parsable prints "JOBID" or "JOBID;CLUSTER".
    job_id = result.stdout.strip().split(";")[0]
    if not job_id.isdigit():
        raise SpecbenchError(f"sbatch {script.name}: unexpected answer {result.stdout.strip()!r}")
    return job_id
