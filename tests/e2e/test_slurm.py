"""`specbench run SUITE --executor slurm` against a real two-node Slurm on this machine.

The module fixture starts munged, slurmctld and two slurmd (node1, node2: each its own host
name and node-local folder, `tools/slurm/start.sh --nodes 2`) in a fresh folder and stops
them with `stop.sh` (which cancels and waits for jobs first, then ends every process of a
node). The results directories live under pytest's tmp folder, i.e. under /tmp, which both
nodes share as a cluster shares a network filesystem: the runs warn that real compute
nodes would not see /tmp, which these tests expect. A node-loss test starts a Slurm of its
own, since it takes one node down for good.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import CLI, background_cli, cli_env, paused, wait_for
from slurm_support import (
    cells,
    cli,
    freeze_node,
    frozen_jobs,
    jobs_of,
    jobs_story,
    kill_node,
    manifest,
    moment,
    node_state,
    on_node,
    overlap_s,
    release_jobs,
    rerun_watching,
    server_pids,
    slurm_instance,
    slurm_run,
    stop_orphans,
    submitted_jobs,
    submitter_run,
    write_suite,
)

pytestmark = pytest.mark.slurm


NODES = ("node1", "node2")


@pytest.fixture(scope="module")
def slurm_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("slurm-state")


@pytest.fixture(scope="module")
def slurm_env(slurm_state: Path) -> Iterator[dict[str, str]]:
    yield from slurm_instance(slurm_state, nodes=2)


@pytest.fixture(scope="session")
def figure(tmp_path_factory: pytest.TempPathFactory):
    """Append a line to BASETEMP/slurm-figures.txt: the figures the issue asks for."""
    path = tmp_path_factory.getbasetemp() / "slurm-figures.txt"

    def record(text: str) -> None:
        with path.open("a") as handle:
            handle.write(text + "\n")

    return record


def summaries(root: Path) -> dict[tuple[str, ...], dict]:
    """What each cell measured that two runs of the seeded emulator agree on (not times)."""
    measured = {}
    for path in root.rglob("summary.json"):
        data = json.loads(path.read_text())
        fields = ("num_requests", "num_failed", "input_tokens", "output_tokens", "concurrency")
        measured[path.relative_to(root).parts[:-1]] = tuple(data[name] for name in fields)
    return measured


@pytest.mark.parametrize(("shard_by", "shards"), [("server", 2), ("workload", 4)])
def test_shards_run_on_both_nodes_at_once_and_measure_a_local_runs_cells(
    slurm_env, tmp_path, figure, shard_by, shards
):
    suite, tag = write_suite(tmp_path, two_workloads=True, exclusive=True)
    local = cli("run", suite, "--output", tmp_path / "local", env=slurm_env)
    assert local.returncode == 0, local.stderr

    out = tmp_path / "slurm"
    args = slurm_run(suite, out)
    started = time.monotonic()
    result = cli(*args, "--shard-by", shard_by, env=slurm_env)
    wall = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert cells(out) == cells(tmp_path / "local")
    assert len(cells(out)) == 8  # 2 servers × 2 workloads × 2 concurrencies
    assert summaries(out) == summaries(tmp_path / "local")  # the emulator is seeded
    assert f"--output {out} is under /tmp" in result.stderr
    assert f"jobs: 0 pending, 0 running, {shards} done, 0 failed; cells 8/8" in result.stdout
    recorded = manifest(out)["slurm"]["shards"]
    jobs = {shard: entry["jobs"][entry["job_id"]] for shard, entry in recorded.items()}
    assert len(jobs) == shards and len({entry["job_id"] for entry in recorded.values()}) == shards
    for shard, job in jobs.items():
        assert job["state"] == "COMPLETED" and job["exit"] == "completed"
        assert job["node"] in NODES and job["start_time"] and job["end_time"]
        assert moment(job["started_at"]) < moment(job["finished_at"])
        log = Path(job["log_path"]).read_text()
        # The job ran on the node Slurm named: its host name is the node's own.
        assert f"job {recorded[shard]['job_id']} on {job['node']}" in log
    per_node = {node: sorted(s for s, job in jobs.items() if job["node"] == node) for node in NODES}
    assert all(per_node.values()), per_node  # both nodes ran shards
    # ... at once: some pair of jobs on different nodes overlapped in time.
    pairs = [overlap_s(jobs[a], jobs[b]) for a in per_node["node1"] for b in per_node["node2"]]
    assert max(pairs) > 0.5, pairs
    run_times = {s: moment(j["finished_at"]) - moment(j["started_at"]) for s, j in jobs.items()}
    figure(
        f"shard-by {shard_by}: shards per node {[len(per_node[n]) for n in NODES]} "
        f"({per_node}), longest overlap of two nodes' jobs {max(pairs):.1f} s, job run times "
        f"{ {s: round(t, 1) for s, t in run_times.items()} } s, campaign wall {wall:.1f} s"
    )
    status = cli("status", out, env=slurm_env)
    assert status.returncode == 0, status.stderr
    for shard, job in jobs.items():
        row = next(line for line in status.stdout.splitlines() if f" {shard} " in line)
        assert f" {recorded[shard]['job_id']} " in row
        assert job["node"] in row and job["started_at"][11:19] in row
        assert job["finished_at"][11:19] in row
    if shard_by == "server":
        return
    assert sorted(recorded) == ["baseline/w0", "baseline/w1", "eagle3/w0", "eagle3/w1"]
    for shard in ("eagle3-w0", "eagle3-w1"):  # one server log per job, never shared
        assert "emu-" in (out / "logs" / shard / "server-eagle3.log").read_text()
    assert len(submitter_run(out)["cells_measured"]) == 8
    eagle = json.loads((out / "eagle3" / "tiny2" / "c4" / "r0" / "summary.json").read_text())
    assert eagle["spec_decode"]["acceptance_length"] > 2.0

    again = cli(*args, "--shard-by", "workload", env=slurm_env)
    assert again.returncode == 0, again.stderr
    assert "submitted" not in again.stderr and again.stderr.count(": complete") == 4
    # Resume across executors: the local run's directory has nothing left to submit.
    onto_local = cli(*args[:3], tmp_path / "local", *args[4:], env=slurm_env)
    assert onto_local.returncode == 0, onto_local.stderr
    assert "submitted" not in onto_local.stderr and "cells 8/8" in onto_local.stdout
    report = cli("report", out, "--out", tmp_path / "report", "--format", "md", env=slurm_env)
    assert report.returncode == 0, report.stderr
    assert "eagle3" in (tmp_path / "report" / "report.md").read_text()
    assert server_pids(tag) == []


def run_and_kill_eagle3(
    slurm_env: dict[str, str], suite: Path, tag: str, out: Path, *extra: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Start a Slurm campaign, SIGKILL the eagle3 job's process after its first cell; then
    stop the servers the killed job left (`stop_orphans`)."""
    try:
        with background_cli(*slurm_run(suite, out, *extra), env=slurm_env) as process:
            first = out / "eagle3" / "tiny" / "c1" / "r0" / "summary.json"
            wait_for(first.exists)
            shard = manifest(out)["slurm"]["shards"]["eagle3"]
            killed_job = shard["job_id"]
            os.kill(shard["jobs"][killed_job]["pid"], signal.SIGKILL)
            stdout, stderr = process.communicate(timeout=180)
    finally:
        stop_orphans(tag)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), killed_job


def test_a_killed_job_is_reported_failed_and_a_rerun_completes_it(slurm_env, tmp_path):
    suite, tag = write_suite(tmp_path, step_ms=8.0, concurrency=(1, 2, 4), max_tokens=48)
    out = tmp_path / "results"
    result, killed = run_and_kill_eagle3(slurm_env, suite, tag, out)
    assert result.returncode == 1, result.stderr
    assert f"eagle3: job {killed} FAILED (exit 0:9" in result.stdout  # the closing failures
    assert "done eagle3/tiny/c1/r0" in result.stdout  # the log tail of the killed job
    assert "1 shard job(s) failed; rerun to resubmit" in result.stderr
    kept = cells(out)
    assert ("eagle3", "tiny", "c1", "r0") in kept and len(kept) < 6
    mtime = (out / "eagle3" / "tiny" / "c1" / "r0" / "summary.json").stat().st_mtime_ns

    status = cli("status", out, env=slurm_env)
    assert status.returncode == 0, status.stderr
    assert "1 done, 1 failed" in status.stdout and "FAILED" in status.stdout

    rerun = cli(*slurm_run(suite, out), env=slurm_env)
    assert rerun.returncode == 0, rerun.stderr
    assert "skip baseline: complete" in rerun.stderr
    assert "submitted eagle3: job" in rerun.stderr and "(attempt 2)" in rerun.stderr
    assert len(cells(out)) == 6
    assert (out / "eagle3" / "tiny" / "c1" / "r0" / "summary.json").stat().st_mtime_ns == mtime
    jobs = manifest(out)["slurm"]["shards"]["eagle3"]["jobs"]
    assert jobs[killed]["state"] == "FAILED" and len(jobs) == 2
    assert server_pids(tag) == []


def test_retries_resubmit_a_killed_job(slurm_env, tmp_path):
    suite, tag = write_suite(tmp_path, step_ms=8.0, concurrency=(1, 2, 4), max_tokens=48)
    out = tmp_path / "results"
    result, killed = run_and_kill_eagle3(slurm_env, suite, tag, out, "--retries", "1")
    assert result.returncode == 0, result.stderr
    assert f"eagle3: job {killed} FAILED" in result.stderr
    assert "submitted eagle3: job" in result.stderr and "(attempt 2)" in result.stderr
    assert len(cells(out)) == 6
    shard = manifest(out)["slurm"]["shards"]["eagle3"]
    assert shard["job_id"] != killed and shard["jobs"][shard["job_id"]]["state"] == "COMPLETED"


def test_detach_returns_at_once_and_status_follows_the_jobs(slurm_env, tmp_path):
    # The jobs are submitted held: none can start, let alone end, before the test says so.
    suite, tag = write_suite(tmp_path, step_ms=8.0, concurrency=(1, 2, 4), max_tokens=64, hold=True)
    out = tmp_path / "results"
    detached = cli("run", suite, "--output", out, "--executor", "slurm", "--detach", env=slurm_env)
    assert detached.returncode == 0, detached.stderr
    assert "submitted baseline: job" in detached.stderr
    assert "run on their own: `specbench status" in detached.stdout
    jobs = manifest(out)["slurm"]["shards"]
    # It returned while its jobs are held (no cell, both PENDING below): a submitter that
    # waited for them would never return. No bound on its wall time: a fresh-clone make test
    # measured 30.2 s for this submission (two `sbatch --test-only`, two `sbatch`, the
    # suite's checks) at a load of ~15 on 2 cores, over the 30 s the test had allowed.
    assert cells(out) == set()

    early = cli("status", out, env=slurm_env)
    assert early.returncode == 0, early.stderr
    assert "jobs: 2 pending, 0 running, 0 done, 0 failed; cells 0/6" in early.stdout
    assert early.stdout.count("PENDING") >= 2, early.stdout

    # A rerun while the jobs run watches them instead of submitting again. They are let go,
    # then frozen mid-run until the rerun has said it watches them: one CI's rerun, on a
    # loaded machine, came after both ~20 s jobs had ended.
    release_jobs(slurm_env, [shard["job_id"] for shard in jobs.values()])
    with frozen_jobs(out, list(jobs)) as frozen:
        watch = rerun_watching(slurm_run(suite, out), slurm_env, frozen, tmp_path / "watch.err")
    assert watch.returncode == 0, watch.stderr + jobs_story(out)
    assert "submitted" not in watch.stderr
    for shard, entry in jobs.items():
        assert f"skip {shard}: job {entry['job_id']} is running; watching it" in watch.stderr

    final = cli("status", out, env=slurm_env)
    assert final.returncode == 0, final.stderr
    assert "jobs: 0 pending, 0 running, 2 done, 0 failed; cells 6/6" in final.stdout
    assert len(submitter_run(out)["cells_measured"]) == 6  # every shard, not the last
    for shard in jobs.values():
        assert f" {shard['job_id']} " in final.stdout
    assert server_pids(tag) == []


def test_ctrl_c_while_watching_cancels_nothing(slurm_env, tmp_path):
    suite, tag = write_suite(tmp_path, step_ms=4.0, concurrency=(1, 2), max_tokens=32)
    out = tmp_path / "results"
    with background_cli(*slurm_run(suite, out), env=slurm_env) as process:
        wait_for(lambda: submitted_jobs(out) == 2)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "nothing was cancelled and the jobs keep running" in stderr
    assert "Traceback" not in stderr
    # The jobs finish on their own.
    wait_for(lambda: "2 done, 0 failed; cells 4/4" in cli("status", out, env=slurm_env).stdout, 60)
    wait_for(lambda: server_pids(tag) == [], 30)


def test_bad_input_is_one_line_and_exit_2(slurm_state, slurm_env, tmp_path):
    suite, tag = write_suite(tmp_path)
    out = tmp_path / "results"
    base = ("run", suite, "--output", out, "--executor", "slurm")

    def error_line(result: subprocess.CompletedProcess[str]) -> str:
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, result.stderr
        return errors[0]

    no_sbatch = {**slurm_env, "PATH": str(Path(sys.executable).parent)}
    assert "sbatch not found on PATH" in error_line(cli(*base, env=no_sbatch))
    partition = error_line(cli(*base, "--partition", "nosuch", env=slurm_env))
    assert "sbatch refused" in partition and "Invalid partition name specified" in partition
    assert "asked with --test-only, nothing submitted" in partition
    # Eight GPUs per node where the nodes have none (the emulator suite itself asks none).
    gpus = error_line(cli(*base, "--gpus-per-node", "8", env=slurm_env))
    assert "(asked with --test-only, nothing submitted)" in gpus
    assert "Invalid generic resource (gres) specification" in gpus
    assert not (out / "manifest.json").exists() and not (out / "slurm").exists()
    shard = error_line(cli(*base, "--shard", "nosuch*", env=slurm_env))
    assert "--shard nosuch*: matches no shard (have baseline, eagle3)" in shard
    assert "matches no cell" not in shard
    unknown = error_line(cli(*base, "--server", "nosuch", env=slurm_env))
    assert "--server 'nosuch': not in the suite" in unknown
    time_limit = error_line(cli(*base, "--time", "soon", env=slurm_env))
    assert "slurm.time_limit" in time_limit and "not a Slurm time" in time_limit
    local_only = error_line(cli("run", suite, "--output", out, "--detach", env=slurm_env))
    assert "need --executor slurm" in local_only
    bad_table = suite.read_text().replace('time_limit = "10:00"', 'partitoin = "gpu"')
    (tmp_path / "typo.toml").write_text(bad_table)
    typo = error_line(cli("run", tmp_path / "typo.toml", "--executor", "slurm", env=slurm_env))
    assert "slurm.partitoin: unknown key; did you mean 'partition'? allowed: partition" in typo
    status = error_line(cli("status", tmp_path / "nothing-here", env=slurm_env))
    assert "no such results directory" in status

    # A results folder the nodes cannot see: this machine's STATE/local, which each node
    # has as a private (empty) disk of its own. Nothing is measured; no retry is made.
    unseen = slurm_state / "local" / f"results-{tag}"
    hidden = error_line(cli(*slurm_run(suite, unseen, "--retries", "2"), env=slurm_env))
    assert f"error: --output {unseen}: job " in hidden
    assert "could not open its log on node node" in hidden and "JobLaunchFailure" in hidden
    assert "not visible (or not writable) there" in hidden
    assert cells(unseen) == set() and submitted_jobs(unseen) == 2  # and no resubmission
    assert all(len(entry["jobs"]) == 1 for entry in manifest(unseen)["slurm"]["shards"].values())


def test_a_job_slurm_has_no_record_of_is_lost_and_without_slurm_the_state_is_not_guessed(
    slurm_env, tmp_path
):
    from slurm_fixtures import record_running_job

    suite, _ = write_suite(tmp_path)
    out = tmp_path / "results"
    cells = ["baseline/tiny/c1/r0", "baseline/tiny/c4/r0"]
    record_running_job(out, suite, "baseline", cells, job_id="987654", node="gone-node")
    # No Slurm tools (say, results copied to a laptop): the last recorded state, marked.
    no_tools = {**slurm_env, "PATH": str(Path(sys.executable).parent)}
    unreachable = cli("status", out, env=no_tools)
    assert unreachable.returncode == 0, unreachable.stderr
    assert "RUNNING?" in unreachable.stdout and "0 failed" in unreachable.stdout
    lost = cli("status", out, env=slurm_env)
    assert lost.returncode == 0, lost.stderr
    assert "LOST" in lost.stdout and "1 failed; cells 0/2" in lost.stdout
    assert "baseline: job 987654 LOST; 2 cell(s) missing" in lost.stdout


def test_scancel_stops_the_servers_of_the_job_and_shows_cancelled(slurm_env, tmp_path):
    suite, tag = write_suite(tmp_path, step_ms=8.0, concurrency=(1, 2, 4), max_tokens=48)
    out = tmp_path / "results"
    args = ("run", suite, "--output", out, "--executor", "slurm", "--server", "eagle3")
    detached = cli(*args, "--detach", env=slurm_env)
    assert detached.returncode == 0, detached.stderr
    job_id = manifest(out)["slurm"]["shards"]["eagle3"]["job_id"]
    wait_for((out / "eagle3" / "tiny" / "c1" / "r0" / "summary.json").exists)
    assert server_pids(tag)  # the job's emulator serves
    subprocess.run(["scancel", job_id], env=slurm_env, check=True, timeout=30)
    # SIGTERM reaches the job, which stops its server before it ends (no orphan to reap).
    wait_for(lambda: server_pids(tag) == [], 30)
    wait_for(lambda: "CANCELLED" in cli("status", out, env=slurm_env).stdout, 30)
    job = manifest(out)["slurm"]["shards"]["eagle3"]["jobs"][job_id]
    assert job["exit"] == "terminated" and job["state"].startswith("CANCELLED")
    status = cli("status", out, env=slurm_env)
    assert "0 done, 1 failed" in status.stdout
    assert "SIGTERM: stopped" in status.stdout  # the log tail


SECRETS = {"HF_TOKEN": "hf_e2eSecretValue0123456789abcdef", "VLLM_API_KEY": "sk-e2e-0123456789abcd"}


def process_environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


def test_secrets_stay_out_of_every_campaign_file_and_reach_the_servers(slurm_env, tmp_path):
    suite, tag = write_suite(tmp_path, step_ms=8.0, concurrency=(1, 2), max_tokens=48)
    table = ", ".join(f'{name} = "{value}"' for name, value in SECRETS.items())
    text = suite.read_text().replace(
        "\n\n[servers.baseline]", f"\nenv = {{ {table} }}\n\n[servers.baseline]"
    )
    suite.write_text(text)
    out = tmp_path / "results"
    # The submitter's own environment lacks them: they reach the jobs from the suite only.
    env = {name: value for name, value in slurm_env.items() if name not in SECRETS}
    seen: dict[int, dict[str, str]] = {}  # each server process's environment, read from /proc
    with background_cli(*slurm_run(suite, out), env=env) as process:
        while process.poll() is None:
            for pid in server_pids(tag):
                seen.setdefault(pid, process_environ(pid))
            time.sleep(0.05)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert len(cells(out)) == 4
    servers = [environ for environ in seen.values() if environ]
    assert len(servers) >= 2  # baseline's and eagle3's, each started by its job
    for environ in servers:
        assert {name: environ.get(name) for name in SECRETS} == SECRETS
    saved = json.loads((out / "slurm" / "suite.json").read_text())
    assert saved["servers"]["eagle3"]["env"] == {name: "<redacted>" for name in SECRETS}
    script = (out / "slurm" / "jobs" / "baseline.sbatch").read_text()
    assert "# The job reads HF_TOKEN, VLLM_API_KEY from its environment" in script

    # The batch script resubmitted by hand from a shell without them: one line, exit 2.
    by_hand = subprocess.run(
        ["sbatch", "--wait", "--parsable", str(out / "slurm" / "jobs" / "baseline.sbatch")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert by_hand.returncode == 2, by_hand.stderr
    job_id = by_hand.stdout.strip().split(";")[0]
    log = (out / "slurm" / "logs" / f"baseline-{job_id}.log").read_text()
    errors = [line for line in log.splitlines() if " error: " in line]
    assert len(errors) == 1 and "Traceback" not in log, log
    assert errors[0].endswith(
        f"error: servers.baseline.env.HF_TOKEN: redacted in {out}/slurm/suite.json; the job "
        "takes it from its environment, where HF_TOKEN is not set: export it where "
        "`specbench run --executor slurm` (or sbatch) runs, and let sbatch pass the "
        "environment on (no --export=NONE)"
    )
    assert manifest(out)["slurm"]["shards"]["baseline"]["jobs"][job_id]["exit"] == "error"

    written = [path for path in tmp_path.rglob("*") if path.is_file() and path != suite]
    assert len(written) > 20
    for path in written:
        data = path.read_bytes()
        assert not any(value.encode() in data for value in SECRETS.values()), path
    assert server_pids(tag) == []


@pytest.fixture
def lossy_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A two-node Slurm of the test's own: the test takes one of its nodes down for good."""
    state = tmp_path_factory.mktemp("slurm-lossy")
    for env in slurm_instance(state, nodes=2):
        yield state, env


def done_lines(logs: list[Path], key: str) -> int:
    """How many job logs say `key` was measured (a `done KEY` line)."""
    return sum(log.read_text().count(f"done {key}\n") for log in logs)


def test_a_node_lost_mid_cell_finishes_on_the_other_node_through_retries(
    lossy_slurm, tmp_path, figure
):
    state, env = lossy_slurm
    suite, tag = write_suite(
        tmp_path, step_ms=8.0, concurrency=(1, 2, 4), max_tokens=96, exclusive=True
    )
    out = tmp_path / "results"
    eagle = out / "eagle3" / "tiny"
    with background_cli(*slurm_run(suite, out, "--retries", "1"), env=env) as process:
        # Lose eagle3's node while its second cell is being measured. The job and its node
        # are read first (noted when the job starts), so the kill follows the cell's first
        # record within one poll.
        wait_for(lambda: submitted_jobs(out) == 2, 180)
        wait_for(lambda: started(out, "eagle3"), 180)
        lost_job = manifest(out)["slurm"]["shards"]["eagle3"]["job_id"]
        lost_node = jobs_of(out, "eagle3")[lost_job]["node"]
        in_flight = eagle / "c2" / "r0" / "requests.jsonl"
        wait_for(lambda: in_flight.exists() and in_flight.stat().st_size > 0, 180)
        # The node hangs, then dies. Frozen first from this process: one CI's kill (a shell
        # and a scan of /proc, under six xdist workers) landed after the cell's ~5 s had
        # run out, and its summary was already written.
        assert freeze_node(state, lost_node) > 0
        killed_at = time.time()
        assert not (eagle / "c2" / "r0" / "summary.json").exists()  # stopped mid-cell
        kill_node(state, lost_node)
        partial_lines = len(in_flight.read_bytes().splitlines())
        c1 = (eagle / "c1" / "r0" / "summary.json").stat().st_mtime_ns
        _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert f"eagle3: job {lost_job} NODE_FAIL" in stderr
    assert "submitted eagle3: job" in stderr and "(attempt 2)" in stderr
    assert len(cells(out)) == 6
    assert "down" in node_state(env, lost_node)

    jobs = jobs_of(out, "eagle3")
    retry_job = manifest(out)["slurm"]["shards"]["eagle3"]["job_id"]
    assert sorted(jobs) == sorted([lost_job, retry_job]) and retry_job != lost_job
    lost, retry = jobs[lost_job], jobs[retry_job]
    # The lost attempt stays recorded: its node, Slurm's verdict, no end of its own.
    assert lost["attempt"] == 1 and lost["state"] == "NODE_FAIL" and lost["node"] == lost_node
    assert lost["started_at"] and "finished_at" not in lost and lost["end_time"]
    other = next(node for node in NODES if node != lost_node)
    assert retry["attempt"] == 2 and retry["state"] == "COMPLETED" and retry["node"] == other
    assert retry["cells_measured"] == 2  # c2 and c4; c1 was complete

    # No completed cell lost or measured twice: c1 untouched, skipped by the retry.
    assert (eagle / "c1" / "r0" / "summary.json").stat().st_mtime_ns == c1
    logs = [Path(job["log_path"]) for job in jobs.values()]
    retry_log = Path(retry["log_path"]).read_text()
    assert "skip eagle3/tiny/c1/r0: already complete" in retry_log
    for key in ("eagle3/tiny/c1/r0", "eagle3/tiny/c2/r0", "eagle3/tiny/c4/r0"):
        assert done_lines(logs, key) == 1, key
    # The cell in flight measured again from scratch: only the retry's records, whole lines.
    summary = json.loads((eagle / "c2" / "r0" / "summary.json").read_text())
    records = [json.loads(line) for line in in_flight.read_bytes().splitlines()]
    assert len(records) == summary["num_requests"] + summary["num_failed"] == 14
    assert in_flight.stat().st_mtime > killed_at
    assert moment(summary["started_at"]) > killed_at
    assert not [path for path in out.rglob("*.tmp")]  # nothing half-written
    assert len(submitter_run(out)["cells_measured"]) == 6
    assert len(jobs_of(out, "baseline")) == 1

    status = cli("status", out, env=env)
    assert status.returncode == 0, status.stderr
    assert "2 done, 0 failed; cells 6/6" in status.stdout
    assert f"eagle3: attempt 1, job {lost_job} NODE_FAIL on {lost_node}" in status.stdout
    assert server_pids(tag) == []
    figure(
        f"node lost: {lost_node} killed during eagle3/tiny/c2/r0 ({partial_lines} of 14 "
        f"records written); cells measured 6 (eagle3: 1 by the lost job, 2 by the retry on "
        f"{other}); re-measured 1 (c2, from scratch); eagle3 attempts recorded {len(jobs)} "
        f"(job {lost_job} NODE_FAIL on {lost_node}, job {retry_job} COMPLETED on {other}); "
        f"detection to end {time.time() - killed_at:.1f} s"
    )


def started(out: Path, shard: str) -> bool:
    jobs = jobs_of(out, shard)
    return bool(jobs) and all("started_at" in job for job in jobs.values())


def test_a_killed_submitter_restarted_reattaches_to_its_jobs(slurm_env, tmp_path):
    suite, tag = write_suite(
        tmp_path, step_ms=8.0, concurrency=(1, 2, 4), max_tokens=64, exclusive=True
    )
    out = tmp_path / "results"
    args = slurm_run(suite, out)
    shards = ("baseline", "eagle3")
    # Both jobs frozen mid-run until the restarted submitter has said it watches them: in
    # one CI, on a loaded machine, the eagle3 job ended before the restart had started.
    with background_cli(*args, env=slurm_env) as first, frozen_jobs(out, shards) as frozen:
        first.kill()  # SIGKILL: no handler runs, the kernel drops its locks
        first.communicate(timeout=30)
        submitted = {shard: manifest(out)["slurm"]["shards"][shard]["job_id"] for shard in shards}
        assert len(cells(out)) < 6
        again = rerun_watching(args, slurm_env, frozen, tmp_path / "again.err")
    assert again.returncode == 0, again.stderr + jobs_story(out)
    for shard in shards:
        assert f"skip {shard}: job {submitted[shard]} is running; watching it" in again.stderr
    assert "submitted" not in again.stderr
    assert "jobs: 0 pending, 0 running, 2 done, 0 failed; cells 6/6" in again.stdout
    assert len(cells(out)) == 6
    for shard in shards:  # one job each: re-attached, never submitted twice
        assert list(jobs_of(out, shard)) == [submitted[shard]]
    assert len(submitter_run(out)["cells_measured"]) == 6
    assert server_pids(tag) == []


def test_a_second_campaign_from_another_node_is_refused_with_the_holders_line(
    slurm_state, slurm_env, tmp_path
):
    suite, tag = write_suite(tmp_path, step_ms=8.0, concurrency=(1, 2), max_tokens=48)
    out = tmp_path / "results"
    args = slurm_run(suite, out)
    # The first campaign is submitted from node2, as from a shell on that node.
    first = subprocess.Popen(
        on_node(slurm_state, "node2", *CLI, *args),
        env=cli_env(slurm_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: submitted_jobs(out) == 2)
        # The first submitter stopped while the others try: under load its jobs (16 s)
        # finished and it let go of the directory before the second CLI reached the lock.
        with paused(first):
            from_here = cli(*args, env=slurm_env)
            from_node1 = subprocess.run(
                on_node(slurm_state, "node1", *CLI, *args),
                env=cli_env(slurm_env),
                capture_output=True,
                text=True,
                timeout=120,
            )
        _, stderr = first.communicate(timeout=180)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    holder = f"another specbench is writing here (pid {first.pid} on host node2 since "
    for refused in (from_here, from_node1):
        assert refused.returncode == 2, refused.stderr
        errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and holder in errors[0], refused.stderr
        assert "run " in errors[0] and str(out) in errors[0]  # the holder's command line
    assert first.returncode == 0, stderr
    assert len(cells(out)) == 4
    assert all(len(jobs_of(out, shard)) == 1 for shard in ("baseline", "eagle3"))
    assert server_pids(tag) == []
