"""What `run --executor slurm` refuses before any sbatch: another writer on the results
directory (the lock `run` takes) and bad data (the validation `run` does before any server
starts). A stand-in sbatch on PATH records every call: none may happen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from harness import DATA, run_cli

from specbench.store.lock import results_lock, submitter_lock

from .slurm_suites import suite_head


def suite_file(folder: Path, workload: str = f'dataset = "{DATA}"') -> Path:
    path = folder / "suite.toml"
    path.write_text(
        suite_head("submitter")
        + f"""[[workloads]]
{workload}
concurrency = [1]
max_tokens = 8
"""
    )
    return path


@pytest.fixture
def sbatch_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose sbatch records its arguments and refuses; the record's path."""
    folder = tmp_path / "bin"
    folder.mkdir()
    calls = tmp_path / "sbatch-calls"
    sbatch = folder / "sbatch"
    sbatch.write_text(
        f'#!/bin/sh\necho "$@" >> {calls}\necho "sbatch: error: stand-in" >&2\nexit 1\n'
    )
    sbatch.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"}, calls


def error_line(result) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_the_submitter_takes_the_results_lock_and_refuses_another_writer(tmp_path, sbatch_env):
    env, calls = sbatch_env
    suite = suite_file(tmp_path)
    out = tmp_path / "results"
    submit = ("run", suite, "--output", out, "--executor", "slurm", "--detach")
    with results_lock(out, "2026-01-02T03:04:05Z"):  # a local run measures here
        line = error_line(run_cli(*submit, env=env))
    assert line.startswith(f"error: {out}: another specbench is writing here (pid {os.getpid()}")
    assert "since 2026-01-02T03:04:05Z" in line and line.endswith("use another --output")
    with submitter_lock(out, "2026-01-02T04:00:00Z"):  # another submitter watches its jobs
        line = error_line(run_cli(*submit, env=env))
    assert "another specbench is writing here" in line and "since 2026-01-02T04:00:00Z" in line
    assert (
        not calls.exists() and not (out / "slurm").exists() and not (out / "manifest.json").exists()
    )
    # The campaign's jobs hold the lock shared: a submitter (a rerun, a retry) gets past it.
    with results_lock(out, "job", shared=True):
        line = error_line(run_cli(*submit, env=env))
    assert "sbatch refused" in line and "stand-in" in line and calls.exists()


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        ('dataset = "MISSING"', "no-such.jsonl"),
        ('dataset = "BROKEN"', "broken.jsonl"),
        (f'dataset = "{DATA}"\ncategories = ["nosuch"]', "nosuch"),
    ],
)
def test_bad_data_is_refused_before_any_sbatch_in_the_words_of_run(
    tmp_path, sbatch_env, workload, expected
):
    env, calls = sbatch_env
    broken = tmp_path / "broken.jsonl"
    broken.write_text(DATA.read_text().splitlines()[0] + "\n{not json\n")
    workload = workload.replace("MISSING", str(tmp_path / "no-such.jsonl"))
    suite = suite_file(tmp_path, workload.replace("BROKEN", str(broken)))
    out = tmp_path / "results"
    slurm = error_line(run_cli("run", suite, "--output", out, "--executor", "slurm", env=env))
    local = error_line(run_cli("run", suite, "--output", tmp_path / "local", env=env))
    assert expected in slurm and slurm == local  # one validation, one message
    assert not calls.exists() and not out.exists()


def test_the_submitters_closing_table_is_on_stdout_its_progress_on_stderr(tmp_path, sbatch_env):
    env, calls = sbatch_env
    suite = suite_file(tmp_path)
    out = tmp_path / "results"
    local = run_cli("run", suite, "--output", out, env=env, timeout=300)
    assert local.returncode == 0, local.stderr
    # Every cell measured: the submitter has nothing to submit, and closes with its table.
    result = run_cli("run", suite, "--output", out, "--executor", "slurm", env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert not calls.exists()  # no sbatch
    assert "skip base: complete" in result.stderr and "skip spec: complete" in result.stderr
    assert "jobs: 0 pending, 0 running, 0 done, 0 failed; cells 2/2" in result.stdout
    assert f"2/2 cells complete in {out}" in result.stdout
    assert "suite submitter on Slurm" in result.stdout
    assert "jobs:" not in result.stderr and "skip" not in result.stdout
