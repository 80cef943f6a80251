"""Pure parts of the Slurm executor: the batch script, state names, shards, `[slurm]` and the
manifest lock (real processes writing one manifest at once)."""

from __future__ import annotations

import json
import multiprocessing
import os
import shlex
import sys
from pathlib import Path

import pytest
from harness import DATA, run_cli
from slurm_fixtures import record_running_job

from specbench.common.errors import SpecbenchError
from specbench.run.plan import suite_hash
from specbench.slurm.executor import node_local_warning
from specbench.slurm.shards import plan_shards
from specbench.slurm.state import category
from specbench.slurm.submit import batch_script
from specbench.store.manifest import read_manifest, update_manifest
from specbench.suite import SlurmSettings, load_suite

from .slurm_suites import suite_text


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(text)
    return path


def test_batch_script_carries_every_setting_in_order(tmp_path):
    settings = SlurmSettings(
        partition="mi355x",
        account="perf",
        time_limit="1-00:00:00",
        nodes=1,
        gpus_per_node=8,
        constraint="mi355x&ib",
        sbatch_options=["--exclusive", "--mem=0"],
        setup="module load rocm\nsource /shared/venv/bin/activate",
        launcher="srun --container-image=rocm/vllm:latest",
        python="python3",
    )
    out = Path("/shared/results dir")
    script = batch_script(
        settings, out, "spec/w1", "specbench-x-spec-w1", out / "slurm/logs/a-%j.log"
    )
    lines = script.splitlines()
    assert lines[:11] == [
        "#!/bin/bash",
        "#SBATCH --job-name=specbench-x-spec-w1",
        "#SBATCH --output=/shared/results dir/slurm/logs/a-%j.log",
        "#SBATCH --nodes=1",
        "#SBATCH --partition=mi355x",
        "#SBATCH --account=perf",
        "#SBATCH --time=1-00:00:00",
        "#SBATCH --gpus-per-node=8",
        "#SBATCH --constraint=mi355x&ib",
        "#SBATCH --exclusive",
        "#SBATCH --mem=0",
    ]
    assert "module load rocm" in lines and "source /shared/venv/bin/activate" in lines
    last = lines[-1]
    assert last.startswith("exec srun --container-image=rocm/vllm:latest python3 -m ")
    argv = shlex.split(last)[3:]
    assert argv == [
        "python3",
        "-m",
        "specbench.slurm.job",
        "/shared/results dir",
        "spec/w1",
    ]


def test_slurm_state_names_map_to_the_four_table_columns():
    assert category("PENDING") == "pending"
    assert category("RUNNING") == "running" and category("COMPLETING") == "running"
    assert category("COMPLETED") == "done"
    for failed in ("FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "CANCELLED by 0"):
        assert category(failed) == "failed", failed
    assert category("CANCELLED+") == "failed"  # sacct's abbreviated form
    assert category(None) == "unknown" and category("UNKNOWN") == "unknown"


def test_shards_by_server_and_by_workload(tmp_path):
    suite = load_suite(write(tmp_path, suite_text()))
    by_server = plan_shards(suite)
    assert [(s.id, len(s.cells)) for s in by_server] == [("base", 4), ("spec", 4)]
    by_workload = plan_shards(suite, "workload")
    assert [s.id for s in by_workload] == ["base/w0", "base/w1", "spec/w0", "spec/w1"]
    assert [c.key for c in by_workload[3].cells] == ["spec/tiny+code/c1/r0", "spec/tiny+code/c2/r0"]
    assert by_workload[3].file_name == "spec-w1"
    assert [s.id for s in plan_shards(suite, "workload", patterns=["*/w1"])] == [
        "base/w1",
        "spec/w1",
    ]
    assert [s.id for s in plan_shards(suite, servers=["spec"])] == ["spec"]
    assert len(by_server[0].missing(suite, tmp_path / "empty")) == 4
    with pytest.raises(
        SpecbenchError, match=r"--shard gpu\*: matches no shard \(have base, spec\)"
    ):
        plan_shards(suite, patterns=["gpu*"])


def test_slurm_table_is_validated_and_stays_out_of_the_suite_hash(tmp_path):
    plain = load_suite(write(tmp_path, suite_text()))
    table = '\n[slurm]\npartition = "gpu"\ntime_limit = "4:00:00"\ngpus_per_node = 8\n'
    with_slurm = load_suite(write(tmp_path, suite_text(table)))
    assert with_slurm.slurm.partition == "gpu" and with_slurm.slurm.gpus_per_node == 8
    assert plain.slurm == SlurmSettings()
    assert suite_hash(with_slurm) == suite_hash(plain)
    overridden = load_suite(write(tmp_path, suite_text(table)), ["slurm.partition=cpu"])
    assert overridden.slurm.partition == "cpu"
    cases = {
        '\n[slurm]\npartitoin = "gpu"\n': (
            "slurm.partitoin: unknown key; did you mean 'partition'? allowed: partition"
        ),
        '\n[slurm]\ntime_limit = "soon"\n': "slurm.time_limit: 'soon' is not a Slurm time",
        '\n[slurm]\ngpus_per_node = 8\ngres = "gpu:8"\n': "give gpus_per_node or gres",
        '\n[slurm]\nsbatch_options = ["exclusive"]\n': "each sbatch option starts with '-'",
    }
    for text, message in cases.items():
        with pytest.raises(SpecbenchError) as error:
            load_suite(write(tmp_path, suite_text(text)))
        assert message in str(error.value) and "suite.toml" in str(error.value)
        assert "\n" not in str(error.value)


def test_results_under_tmp_get_a_warning():
    assert "under /tmp" in (node_local_warning(Path("/tmp/pytest/results")) or "")
    assert node_local_warning(Path("/dev/shm/x")) is not None
    assert node_local_warning(Path("/shared/results")) is None
    assert node_local_warning(Path("/tmpfs/results")) is None


def _write_many(root: str, writer: int, count: int) -> None:
    for index in range(count):
        update = {"shards": {f"s{writer}": {"jobs": {str(index): {}}}}}
        update_manifest(Path(root), lambda m, update=update: m.with_slurm(update))


def test_concurrent_writers_lose_no_manifest_section(tmp_path):
    writers, count = 4, 25
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_write_many, args=(str(tmp_path), writer, count))
        for writer in range(writers)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    manifest = read_manifest(tmp_path)
    assert manifest is not None and manifest.slurm is not None
    shards = manifest.slurm["shards"]
    assert {name: len(shard["jobs"]) for name, shard in shards.items()} == {
        f"s{writer}": count for writer in range(writers)
    }


def test_dry_run_prints_shards_and_batch_scripts_without_slurm(tmp_path):
    suite = write(tmp_path, suite_text('\n[slurm]\npartition = "gpu"\n'))
    out = tmp_path / "results"
    command = ["run", str(suite), "--output", str(out), "--executor", "slurm"]
    command += ["--shard-by", "workload", "--dry-run", "--time", "2:00:00"]
    no_sbatch = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    result = run_cli(*command, timeout=120, env=no_sbatch)
    assert result.returncode == 0, result.stderr
    assert "slurm: 4 shard(s) by workload" in result.stdout
    assert "  spec/w1: 2 cells, 2 missing" in result.stdout
    assert result.stdout.count("#SBATCH --partition=gpu") == 4
    assert result.stdout.count("#SBATCH --time=2:00:00") == 4
    assert f"--- {out}/slurm/jobs/spec-w1.sbatch" in result.stdout
    # Each job reads its run options from JSON, restricted to its shard (no argv mirror).
    marker = f"--- {out}/slurm/jobs/spec-w1.json\n"
    options = json.loads(result.stdout.split(marker)[1].splitlines()[0])
    assert options["servers"] == ["spec"] and options["workloads"] == ["tiny+code"]
    assert options["max_restarts"] == 2 and options["ready_timeout_s"] == 1800.0
    assert options["log_dir"] == f"{out}/logs/spec-w1"
    assert not out.exists()  # nothing written, nothing submitted


def test_the_dry_run_is_the_submitters_preflight_a_missing_dataset_is_one_line(tmp_path):
    missing = tmp_path / "gone.jsonl"
    suite = write(tmp_path, suite_text().replace(str(DATA), str(missing)))
    command = ["run", str(suite), "--output", str(tmp_path / "r"), "--executor", "slurm"]
    no_sbatch = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    result = run_cli(*command, "--dry-run", timeout=120, env=no_sbatch)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""  # refused before the suite or a script is printed
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert str(missing) in line


def test_a_workload_selection_reaches_the_shards_and_their_jobs(tmp_path):
    from specbench.run.plan import RunOptions
    from specbench.slurm.executor import SlurmRun, _job_options

    suite = load_suite(write(tmp_path, suite_text()))
    shards = plan_shards(suite, workloads=["tiny+code"])
    assert [(s.id, len(s.cells)) for s in shards] == [("base", 2), ("spec", 2)]
    assert all("/tiny+code/" in c.key for s in shards for c in s.cells)
    assert suite.slurm is not None
    run = SlurmRun(RunOptions(output=tmp_path / "out", workloads=("tiny+code",)), suite.slurm)
    assert _job_options(suite, run, shards[0], force=False).workloads == ("tiny+code",)
    with pytest.raises(SpecbenchError, match="nope"):
        plan_shards(suite, workloads=["nope"])


def test_status_prints_its_table_and_totals_on_stdout(tmp_path):
    out = tmp_path / "results"
    suite = write(tmp_path, suite_text(workloads=1))
    cells = ["base/tiny+chat/c1/r0", "base/tiny+chat/c2/r0"]
    record_running_job(out, suite, "base", cells, job_id="987654", node="node7")
    # No Slurm tools (results copied to a laptop): the last recorded state, marked.
    no_tools = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    result = run_cli("status", str(out), timeout=120, env=no_tools)
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if " base " in line)
    assert " 987654 " in row and "RUNNING?" in row and "node7" in row and "0/2" in row
    # A state not confirmed by Slurm is counted in none of the four columns.
    assert "jobs: 0 pending, 0 running, 0 done, 0 failed; cells 0/2" in result.stdout
    assert "987654" not in result.stderr and "jobs:" not in result.stderr
