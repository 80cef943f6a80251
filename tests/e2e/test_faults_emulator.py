"""Faults injected into a campaign against emulator servers: nothing lost, nothing leaked.

Each test injects one fault (a signal, a second writer, a kill -9, a bad file) and asserts
the exit code, the one-line message and that the cells completed before stay intact.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import (
    DATA,
    REPO,
    background_cli,
    bench_argv,
    emulator_process,
    fault_proxy,
    fill,
    free_port,
    in_flight,
    one_line,
    paused,
    run_cli,
    running_emulator,
    server_pids,
    small_disk,
    summary_bytes,
    wait_for,
    write_campaign_suite,
)

PLACEHOLDERS = REPO / "tests" / "fixtures" / "speed_bench_placeholders" / "data"


def test_sigterm_mid_cell_discards_the_cell_exits_143_and_keeps_the_others(tmp_path):
    suite, tag = write_campaign_suite(tmp_path, step_ms=6.0, concurrency=(1, 8), max_tokens=48)
    out = tmp_path / "results"
    with background_cli("run", suite, "--output", out) as process:
        wait_for(lambda: len(summary_bytes(out)) >= 1 and in_flight(out))
        # Stopped while the kept cells are read and SIGTERM is sent (it arrives with the
        # SIGCONT): under load the cell in flight could otherwise finish in between.
        with paused(process):
            kept = summary_bytes(out)
            process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr
    assert one_line(stderr).startswith("interrupted: interrupted by SIGTERM"), stderr
    after = summary_bytes(out)
    assert after == kept  # the in-flight cell was not saved; the earlier ones are untouched
    wait_for(lambda: server_pids(tag) == [], 30)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runs"][-1]["status"] == "interrupted"
    for records in out.rglob("requests.jsonl"):  # no request broken by the harness itself
        if (records.parent / "summary.json").exists():
            assert all(json.loads(line)["error_type"] is None for line in records.open())

    rerun = run_cli("run", suite, "--output", out)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{4 - len(kept)} cells measured, {len(kept)} already complete" in rerun.stdout
    assert {p: summary_bytes(out)[p] for p in kept} == kept


def test_sigint_inherited_as_ignored_stays_ignored(tmp_path):
    suite, tag = write_campaign_suite(tmp_path, step_ms=4.0, concurrency=(8,), max_tokens=48)
    out = tmp_path / "results"

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # `specbench run ... &` from a script

    with background_cli("run", suite, "--output", out, preexec_fn=ignore_sigint) as process:
        wait_for(lambda: bool(in_flight(out)) or process.poll() is not None)
        for _ in range(5):
            if process.poll() is not None:
                break
            process.send_signal(signal.SIGINT)
            time.sleep(0.05)
        stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert "2 cells measured" in stdout
    for records in out.rglob("requests.jsonl"):
        rows = [json.loads(line) for line in records.open()]
        summary = json.loads((records.parent / "summary.json").read_text())
        assert summary["num_failed"] == 0 and len(rows) == summary["num_requests"] == 14
        assert all(row["error_type"] is None for row in rows)
    assert server_pids(tag) == []


def test_a_second_writer_is_refused_naming_the_holder_and_the_first_run_is_intact(tmp_path):
    # The first is paused mid-cell while the second runs: a window no load can close (a
    # 10 s window of a slow cell was not enough on a loaded CI machine: the second started
    # after the first had finished and found both cells complete).
    suite, tag = write_campaign_suite(tmp_path, step_ms=6.0, concurrency=(1, 4), max_tokens=48)
    out = tmp_path / "results"
    with background_cli("run", suite, "--output", out, "--server", "eagle3") as first:
        wait_for(lambda: bool(in_flight(out)))
        with paused(first):
            second = run_cli("run", suite, "--output", out, "--server", "eagle3")
        _, stderr = first.communicate(timeout=300)
    assert second.returncode == 2, second.stderr
    line = one_line(second.stderr)
    assert len([x for x in second.stderr.splitlines() if x.strip()]) == 1, second.stderr
    assert line.startswith(f"error: {out}: another specbench is writing here (pid {first.pid} on")
    assert os.uname().nodename in line and " since 20" in line
    assert first.returncode == 0, stderr
    for records in out.rglob("requests.jsonl"):  # one writer's records, none garbled
        rows = [json.loads(line) for line in records.open()]
        assert (
            len(rows) == json.loads((records.parent / "summary.json").read_text())["num_requests"]
        )
    assert len(summary_bytes(out)) == 2
    # The lock went with the first run: a rerun may write (and finds nothing to measure).
    again = run_cli("run", suite, "--output", out, "--server", "eagle3")
    assert again.returncode == 0 and "0 cells measured, 2 already complete" in again.stdout
    assert server_pids(tag) == []


SECRETS = {"HF_TOKEN": "tok-AAAA1111", "MY_SERVICE_KEY": "key-BBBB2222", "CORP_PASS": "pw-CCCC3333"}


def test_secrets_in_a_suite_env_never_reach_the_manifest_or_the_screen(tmp_path):
    table = ", ".join(f'{k} = "{v}"' for k, v in SECRETS.items())
    suite, tag = write_campaign_suite(
        tmp_path, concurrency=(1,), max_tokens=8, env=f"env = {{ {table} }}"
    )
    out = tmp_path / "results"
    env = {**os.environ, "SPECBENCH_REDACT_ENV": "CORP_PASS"}
    dry = run_cli("run", suite, "--dry-run", env=env)
    result = run_cli("run", suite, "--output", out, env=env)
    assert dry.returncode == 0 and result.returncode == 0, result.stderr
    manifest = (out / "manifest.json").read_text()
    logs = "".join(p.read_text() for p in (out / "logs").iterdir())
    for value in SECRETS.values():
        for text in (manifest, dry.stdout, dry.stderr, result.stdout, result.stderr, logs):
            assert value not in text
    assert manifest.count('"HF_TOKEN": "<redacted>"') == 4  # suite and provenance, 2 servers
    assert manifest.count('"CORP_PASS": "<redacted>"') == 4
    assert "HF_TOKEN='<redacted>'" in dry.stdout
    assert server_pids(tag) == []


def test_kill_9_of_the_campaign_takes_its_server_down_and_a_rerun_completes(tmp_path):
    suite, tag = write_campaign_suite(tmp_path, step_ms=6.0, concurrency=(1, 8), max_tokens=48)
    out = tmp_path / "results"
    with background_cli("run", suite, "--output", out) as process:
        wait_for(lambda: len(summary_bytes(out)) >= 1 and in_flight(out))
        assert len(server_pids(tag)) == 1
        kept = summary_bytes(out)
        process.kill()  # SIGKILL: no handler runs, no teardown
        process.communicate(timeout=30)
    wait_for(lambda: server_pids(tag) == [], 30)  # the parent-death signal stopped it
    rerun = run_cli("run", suite, "--output", out)  # the kernel released the lock
    assert rerun.returncode == 0, rerun.stderr
    assert f"{4 - len(kept)} cells measured, {len(kept)} already complete" in rerun.stdout
    assert {p: summary_bytes(out)[p] for p in kept} == kept
    manifest = json.loads((out / "manifest.json").read_text())
    assert all(server.get("process") is None for server in manifest["servers"].values())


def test_a_rerun_stops_a_server_a_dead_campaign_left_running(tmp_path):
    from specbench.launch.host import process_identity
    from specbench.store.manifest import update_manifest

    suite, tag = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
    out = tmp_path / "results"
    assert run_cli("run", suite, "--output", out).returncode == 0
    # A server as a campaign killed on a system without a parent-death signal leaves it.
    left = emulator_process(free_port(), "--model", tag)
    try:
        wait_for(lambda: left.pid in server_pids(tag), 30)
        identity = process_identity(left.pid)
        update_manifest(out, lambda m: m.with_server("eagle3", process=identity))
        rerun = run_cli("run", suite, "--output", out)
        assert rerun.returncode == 0, rerun.stderr
        assert (
            f"server 'eagle3': pid {left.pid}, started by an earlier run that died, was still "
            "running; stopped it" in " ".join(rerun.stderr.split())
        )
        assert left.wait(timeout=30) is not None
    finally:
        if left.poll() is None:
            os.killpg(left.pid, signal.SIGKILL)
            left.wait()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["servers"]["eagle3"]["process"] is None
    # A recorded pid that is now someone else's process (pid reuse) is left alone.
    other = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        reused = {**identity, "pid": other.pid}
        update_manifest(out, lambda m: m.with_server("eagle3", process=reused))
        again = run_cli("run", suite, "--output", out)
        assert again.returncode == 0 and "was still running" not in again.stderr
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_bench_max_tokens_above_the_served_context_is_refused_before_any_request(tmp_path):
    out = tmp_path / "results"
    with running_emulator("--model", "m", "--max-model-len", "64") as url:
        result = run_cli(
            "bench", "--endpoint", url, "--dataset", DATA, "--output", out, "--max-tokens", "100"
        )
    assert result.returncode == 2, result.stderr
    assert one_line(result.stderr) == (
        f"error: max_tokens = 100 leaves no room for a prompt in max_model_len = 64 of {url} "
        "(/v1/models): "
        "every request would be rejected; allowed: below 64"
    )
    assert not list(out.rglob("requests.jsonl"))


def test_every_workload_dataset_is_checked_before_any_server_starts(tmp_path):
    bad_line = tmp_path / "bad.jsonl"
    bad_line.write_text('{"category": "chat", "turns": ["hi"]}\n{bad json\n')
    cases = {
        "missing": (f"{tmp_path}/nosuch.jsonl", "file not found"),
        "bad-line": (str(bad_line), f"{bad_line}:2: not valid JSON"),
        "placeholders": (f"speed-bench:qualitative:{PLACEHOLDERS}", "placeholder"),
    }
    for name, (dataset, expected) in cases.items():
        suite, tag = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
        # The first workload is fine: the bad second one must still stop the run up front.
        suite.write_text(
            suite.read_text()
            + f'\n[[workloads]]\nname = "second"\ndataset = "{dataset}"\n'
            + "concurrency = [1]\nmax_tokens = 8\n"
        )
        out = tmp_path / f"results-{name}"
        result = run_cli("run", suite, "--output", out)
        assert result.returncode == 2, (name, result.stderr)
        assert expected in one_line(result.stderr), (name, result.stderr)
        assert "starting" not in result.stderr and not (out / "logs").exists(), name
        assert server_pids(tag) == []
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
    text = suite.read_text().replace(
        f'dataset = "{DATA}"', f'dataset = "{DATA}"\ncategories = ["nosuch"]'
    )
    suite.write_text(text)
    result = run_cli("run", suite, "--output", tmp_path / "results-category")
    assert result.returncode == 2 and "nosuch" in one_line(result.stderr), result.stderr
    assert "starting" not in result.stderr


@contextlib.contextmanager
def mounted_small_disk(path: Path, size: str) -> Iterator[Path]:
    """`harness.small_disk`, skipping the test where a tmpfs cannot be mounted (needs root)."""
    with small_disk(path, size) as disk:
        if disk is None:
            pytest.skip("cannot mount a tmpfs here (needs root)")
        yield disk


def test_output_that_is_a_file_is_one_line_exit_2(tmp_path):
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
    target = tmp_path / "a-file"
    target.write_text("not a folder")
    result = run_cli("run", suite, "--output", target)
    assert result.returncode == 2, result.stderr
    assert [x for x in result.stderr.splitlines() if x.strip()] == [
        f"error: {target}: File exists; a file stands where a folder is needed: --output must "
        "name a directory"
    ]
    assert target.read_text() == "not a folder"


def test_read_only_results_dir_is_one_line_exit_2(tmp_path):
    suite, tag = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
    with mounted_small_disk(tmp_path / "ro", "1m") as disk:
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        result = run_cli("run", suite, "--output", disk / "results")
    assert result.returncode == 2, result.stderr
    assert one_line(result.stderr) == (
        f"error: {disk / 'results'}: Read-only file system; the file system is read-only: "
        "choose a writable --output"
    )
    assert "Traceback" not in result.stderr and server_pids(tag) == []


@contextlib.contextmanager
def immutable(*paths: Path) -> Iterator[None]:
    """`chattr +i` on each path for the block: not even root may change it (chmod would not
    stop root)."""
    done: list[Path] = []
    try:
        for path in paths:
            result = subprocess.run(
                ["chattr", "+i", str(path)], capture_output=True, text=True, check=False
            )
            if result.returncode != 0:
                pytest.skip(f"chattr +i refused here: {result.stderr.strip()}")
            done.append(path)
        yield
    finally:
        for path in done:
            subprocess.run(["chattr", "-i", str(path)], check=False)


@contextlib.contextmanager
def read_only_view(source: Path, view: Path) -> Iterator[Path]:
    """`source` bind-mounted read-only at `view` (EROFS for root too)."""
    view.mkdir()
    bound = subprocess.run(
        ["mount", "--bind", str(source), str(view)], capture_output=True, check=False
    )
    if bound.returncode != 0:
        pytest.skip(f"cannot bind-mount here (needs root): {bound.stderr!r}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True)
        yield view
    finally:
        subprocess.run(["umount", "-l", str(view)], check=False)


def tree(root: Path) -> dict[Path, bytes]:
    """Every file under `root` and its bytes, but the writer's lock (rewritten on each try)."""
    return {
        p.relative_to(root): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".specbench.lock"
    }


def error_lines(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.strip()]


def test_earlier_results_that_cannot_be_written_are_one_line_exit_2_and_left_as_they_were(
    tmp_path,
):
    suite, tag = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
    out = tmp_path / "results"
    assert run_cli("run", suite, "--output", out).returncode == 0
    shutil.rmtree(out / "eagle3")  # a rerun has a server's cells to measure
    before = tree(out)

    with immutable(out):
        result = run_cli("run", suite, "--output", out)
    assert result.returncode == 2, result.stderr
    assert error_lines(result.stderr) == [
        f"error: {out / 'manifest.json'}: Operation not permitted; the file or folder may be "
        "immutable (chattr +i): choose another --output"
    ]
    assert tree(out) == before

    with read_only_view(out, tmp_path / "view") as view:
        result = run_cli("run", suite, "--output", view)
    assert result.returncode == 2, result.stderr
    assert error_lines(result.stderr) == [
        f"error: {view / '.specbench.lock'}: Read-only file system; the file system is "
        "read-only: choose a writable --output"
    ]
    assert tree(out) == before and server_pids(tag) == []

    rerun = run_cli("run", suite, "--output", out)
    assert rerun.returncode == 0, rerun.stderr
    assert {p: b for p, b in tree(out).items() if p.parts[0] == "baseline"} == {
        p: b for p, b in before.items() if p.parts[0] == "baseline"
    }


def test_a_summary_that_cannot_be_written_stops_the_run_before_its_cell_is_touched(tmp_path):
    suite, tag = write_campaign_suite(tmp_path, concurrency=(1, 2), max_tokens=8)
    out = tmp_path / "results"
    assert run_cli("run", suite, "--output", out).returncode == 0
    last = out / "eagle3" / "tiny" / "c2" / "r0"  # the plan's last cell
    before = tree(last)

    # Measured again (--force) over a summary.json that cannot be replaced: the new
    # attempt's records must never land beside the old summary.
    with immutable(last / "summary.json"):
        result = run_cli("run", suite, "--output", out, "--force")
    assert result.returncode == 2, result.stderr
    assert error_lines(result.stderr)[-1] == (
        f"error: {last / 'summary.json'}: Operation not permitted; the file or folder may be "
        "immutable (chattr +i): choose another --output"
    )
    assert tree(last) == before
    assert not list(out.rglob("*.tmp")) and server_pids(tag) == []
    measured = [c for c in out.rglob("summary.json") if c.parent != last]
    assert len(measured) == 3  # the cells before it, measured again and complete

    # A fresh cell whose summary.json path is taken by a folder: nothing written there.
    shutil.rmtree(last)
    (last / "summary.json").mkdir(parents=True)
    result = run_cli("run", suite, "--output", out)
    assert result.returncode == 2, result.stderr
    assert error_lines(result.stderr)[-1] == (
        f"error: {last / 'summary.json'}: Is a directory; a folder stands where a file is "
        "expected: name a file"
    )
    assert [p.name for p in last.iterdir()] == ["summary.json"]
    assert not list(out.rglob("*.tmp")) and server_pids(tag) == []


def test_disk_full_mid_campaign_keeps_cells_and_a_rerun_completes(tmp_path):
    suite, tag = write_campaign_suite(tmp_path, step_ms=6.0, concurrency=(1, 8), max_tokens=48)
    with mounted_small_disk(tmp_path / "disk", "4m") as disk:
        out = disk / "results"
        with background_cli("run", suite, "--output", out) as process:
            wait_for(lambda: len(summary_bytes(out)) >= 1 and in_flight(out))
            filler = fill(disk)
            _, stderr = process.communicate(timeout=120)
        assert process.returncode == 2, stderr
        assert "Traceback" not in stderr
        line = one_line(stderr)
        assert line.startswith(f"error: {out}/") and line.endswith(
            "No space left on device; the disk is full: free space, then rerun (completed cells "
            "are kept)"
        ), stderr
        wait_for(lambda: server_pids(tag) == [], 30)
        kept = {p: b for p, b in summary_bytes(out).items()}
        assert kept and all(json.loads(b)["num_requests"] == 14 for b in kept.values())
        assert not list(out.rglob("*.tmp"))  # no half-written file left under a temp name
        filler.unlink()
        rerun = run_cli("run", suite, "--output", out)
        assert rerun.returncode == 0, rerun.stderr
        assert f"{len(kept)} already complete" in rerun.stdout
        assert {p: summary_bytes(out)[p] for p in kept} == kept
        assert len(summary_bytes(out)) == 4

        # A report on a full disk: one line, exit 2, and no truncated figure left behind.
        filler = fill(disk)
        report = run_cli("report", out, "--out", disk / "report")
        assert report.returncode == 2, report.stderr
        assert "No space left on device; the disk is full" in one_line(report.stderr)
        assert "Traceback" not in report.stderr
        figures = list((disk / "report").rglob("*.png")) + list((disk / "report").rglob("*.svg"))
        assert all(p.stat().st_size > 0 for p in figures)
        assert not list((disk / "report").rglob("*.partial"))


def test_a_server_restart_inside_the_window_fails_the_cell_even_when_counters_climb(tmp_path):
    out = tmp_path / "results"
    slow = ("--model", "m", "--step-ms", "6", "--num-speculative-tokens", "3", "--seed", "1")
    with running_emulator(*slow) as first, running_emulator(*slow) as second:
        # The "restarted" server has served more than the first before the window: its
        # counters end above the first's, so no counter goes down.
        warm = run_cli(*bench_argv(second, tmp_path / "w"))
        assert warm.returncode == 0, warm.stderr
        with (
            fault_proxy(first) as proxy,
            background_cli(*bench_argv(proxy.url, out, "--max-tokens", "48")) as bench,
        ):
            wait_for(lambda: bool(in_flight(out)))
            proxy.switch(second)
            _, stderr = bench.communicate(timeout=120)
    assert bench.returncode == 1, stderr  # a failed cell, as `run` says it
    assert "Traceback" not in stderr
    cell = out / "default" / "tiny" / "c1" / "r0"
    assert not (cell / "summary.json").exists()
    failure = json.loads((cell / "failure.json").read_text())
    assert failure["message"].startswith("process_start_time_seconds changed from ")
    assert "the server restarted" in failure["message"]


def test_report_and_lossless_name_the_cells_a_campaign_did_not_measure(tmp_path):
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1, 2), max_tokens=8)
    out = tmp_path / "results"
    assert run_cli("run", suite, "--output", out).returncode == 0
    shutil.rmtree(out / "eagle3" / "tiny" / "c2")  # as if the run was stopped before it
    expected = (
        "1 cell(s) of the suite have no results (never measured, or interrupted): "
        "eagle3/tiny/c2/r0; `specbench run` on the same --output measures them"
    )
    report = run_cli("report", out)
    assert report.returncode == 0, report.stderr
    assert expected in " ".join(report.stderr.split() + report.stdout.split())
    assert "## Missing cells" in (out / "report" / "report.md").read_text()
    lossless = run_cli("lossless", out)
    assert f"missing: {expected}" in lossless.stdout + lossless.stderr
    assert json.loads((out / "lossless.json").read_text())["missing"] == ["eagle3/tiny/c2/r0"]
