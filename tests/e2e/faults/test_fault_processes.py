"""Faults of processes (F01–F13): signals mid-cell and mid-start, kill -9, a server left by a
dead campaign, two writers, a server restarted inside the window or killed mid-campaign.

Each survives: the documented exit code and one line, no traceback, completed cells
byte-identical, no cell saved from bad data, no process left, and where it matters a rerun
measures exactly the cells missing.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from fault_checks import (
    DATA_LOSS,
    assert_clean_exit,
    assert_consistent,
    assert_ignored,
    assert_interrupted,
    assert_kept,
    assert_no_leftovers,
)
from fault_scratch import FAULTS_TEST, FaultCase, Observed, Scratch, case
from harness import (
    bench_argv,
    emulator_process,
    fault_proxy,
    free_port,
    in_flight,
    pids_of,
    running_emulator,
    summary_bytes,
    wait_until,
)

pytestmark = pytest.mark.faults

CAMPAIGN_TEST = "tests/e2e/test_campaign_emulator.py"
LAUNCH_TEST = "tests/e2e/test_launch_emulator.py"


def rerun_measures_the_rest(
    scratch: Scratch, suite: Path, out: Path, kept: dict[Path, bytes]
) -> str:
    """A rerun of the 4-cell campaign measures the cells not `kept` and leaves those
    byte-identical; what it said."""
    rerun = scratch.rerun(suite, out)
    measured = f"{4 - len(kept)} cells measured, {len(kept)} already complete"
    assert measured in rerun.stdout, f"the rerun did not say {measured!r}"
    assert_kept(kept, summary_bytes(out))
    return measured


@pytest.mark.parametrize(
    ("case", "sig", "code", "ignore"),
    [
        case(
            "F01",
            "SIGTERM mid-cell",
            "exit 143, `interrupted: …SIGTERM`; in-flight cell not saved; rerun measures the rest",
            f"{FAULTS_TEST}::test_sigterm_mid_cell_discards_the_cell_exits_143_and_keeps_the_others",
            signal.SIGTERM,
            143,
            False,
            server=True,
        ),
        case(
            "F02",
            "SIGINT (Ctrl-C) mid-cell",
            "exit 130, `interrupted: …SIGINT`; in-flight cell not saved; rerun measures the rest",
            f"{CAMPAIGN_TEST}::test_sigint_mid_campaign_stops_servers_keeps_cells_and_rerun_completes",
            signal.SIGINT,
            130,
            False,
            server=True,
        ),
        case(
            "F03",
            "SIGINT inherited as ignored, mid-cell",
            "the signal stays ignored: exit 0, all 4 cells saved with no request broken",
            f"{FAULTS_TEST}::test_sigint_inherited_as_ignored_stays_ignored",
            signal.SIGINT,
            0,
            True,
            server=True,
        ),
    ],
)
def test_a_signal_mid_cell(
    case: FaultCase, sig: int, code: int, ignore: bool, scratch: Scratch, observe: Observed
) -> None:
    """A campaign stopped by `sig` while a cell is in flight (after one cell completed)."""
    folder = scratch.dir(f"signal-{sig}")
    suite, tag = scratch.suite(folder, step_ms=6.0, concurrency=(1, 8), max_tokens=48)
    out = folder / "results"

    process = scratch.popen("run", suite, "--output", out, ignore_sigint=ignore)
    assert wait_until(
        lambda: (summary_bytes(out) and in_flight(out)) or process.poll() is not None
    ), "no cell in flight after 120 s"
    kept = summary_bytes(out)
    for _ in range(5 if ignore else 1):
        if process.poll() is None:
            process.send_signal(sig)
            time.sleep(0.05)
    outcome = scratch.finish(process)
    observe(outcome)
    if ignore:
        assert_ignored(outcome, out, 4)
    else:
        assert_interrupted(outcome, sig, code)
        assert summary_bytes(out) == kept, f"{DATA_LOSS}the in-flight cell was saved"
    assert_consistent(out)
    assert_no_leftovers(tag)
    if not ignore:
        measured = rerun_measures_the_rest(scratch, suite, out, kept)
        observe(outcome, f"kept {len(kept)} cells; rerun: {measured}")


@pytest.mark.parametrize(
    ("case", "sig", "code", "ignore"),
    [
        case(
            "F04",
            "SIGTERM while the first server starts",
            "exit 143, one `interrupted` line, the starting server stopped, no cell saved",
            f"{LAUNCH_TEST}::test_sigterm_inside_the_block_stops_the_server_and_restores_the_handler",
            signal.SIGTERM,
            143,
            False,
            server=True,
        ),
        case(
            "F05",
            "SIGINT while the first server starts",
            "exit 130, one `interrupted` line, the starting server stopped, no cell saved",
            f"{LAUNCH_TEST}::test_sigint_during_startup_kills_the_starting_server",
            signal.SIGINT,
            130,
            False,
            server=True,
        ),
        case(
            "F06",
            "SIGINT inherited as ignored, while the server starts",
            "ignored: exit 0, both cells saved",
            "tests/unit/common/test_interrupt.py",
            signal.SIGINT,
            0,
            True,
            server=True,
        ),
        case(
            "F07",
            "kill -9 of the campaign while its server starts",
            "the starting server dies with the campaign (no orphan); a rerun completes, exit 0",
            f"{FAULTS_TEST}::test_kill_9_of_the_campaign_takes_its_server_down_and_a_rerun_completes",
            signal.SIGKILL,
            0,
            False,
            server=True,
        ),
    ],
)
def test_a_signal_while_the_server_starts(
    case: FaultCase, sig: int, code: int, ignore: bool, scratch: Scratch, observe: Observed
) -> None:
    """A campaign stopped by `sig` while its first server is starting (not yet ready)."""
    folder = scratch.dir(f"start-signal-{sig}")
    suite, tag = scratch.suite(folder, concurrency=(1,), max_tokens=8)
    out = folder / "results"

    process = scratch.popen("run", suite, "--output", out, ignore_sigint=ignore)
    started = wait_until(lambda: pids_of(tag) or process.poll() is not None, 60)
    assert started and process.poll() is None, "no server start seen"
    assert not in_flight(out) and not summary_bytes(out), "the server was already measuring"
    if sig == signal.SIGKILL:
        process.kill()
        outcome = scratch.finish(process)
        observe(outcome)
        assert_no_leftovers(tag)
        rerun = scratch.rerun(suite, out)
        observe(outcome, f"server gone; rerun exit {rerun.code}")
    else:
        process.send_signal(sig)
        outcome = scratch.finish(process)
        observe(outcome)
        if ignore:
            assert_ignored(outcome, out, 2)
        else:
            assert_interrupted(outcome, sig, code)
            assert not summary_bytes(out), f"{DATA_LOSS}a cell was saved"
        assert_no_leftovers(tag)
    assert_consistent(out)


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F08",
            "kill -9 of the campaign mid-cell",
            "no orphan server; the lock is released; rerun measures the rest, completed cells "
            "identical",
            f"{FAULTS_TEST}::test_kill_9_of_the_campaign_takes_its_server_down_and_a_rerun_completes",
            server=True,
        )
    ],
)
def test_kill_9_mid_cell(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    folder = scratch.dir("kill9")
    suite, tag = scratch.suite(folder, step_ms=6.0, concurrency=(1, 8), max_tokens=48)
    out = folder / "results"
    process = scratch.popen("run", suite, "--output", out)
    assert wait_until(lambda: summary_bytes(out) and in_flight(out)), "no cell in flight"
    kept = summary_bytes(out)
    process.kill()
    outcome = scratch.finish(process)
    observe(outcome)
    assert_no_leftovers(tag)
    measured = rerun_measures_the_rest(scratch, suite, out, kept)
    assert_consistent(out)
    observe(outcome, f"no orphan; rerun: {measured}")


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F09",
            "a server left running by a dead campaign",
            "the rerun names it (pid) and stops it, exit 0; a reused pid is left alone",
            f"{FAULTS_TEST}::test_a_rerun_stops_a_server_a_dead_campaign_left_running",
            server=True,
        )
    ],
)
def test_a_server_left_by_a_dead_campaign(
    case: FaultCase, scratch: Scratch, observe: Observed
) -> None:
    from specbench.launch.host import process_identity
    from specbench.store.manifest import update_manifest

    suite, out = scratch.campaign_copy("left-server")
    tag = uuid.uuid4().hex[:12]
    left = emulator_process(free_port(), "--model", f"left-{tag}")
    try:
        wait_until(lambda: left.pid in pids_of(tag), 30)
        identity = process_identity(left.pid)
        update_manifest(out, lambda m: m.with_server("eagle3", process=identity))
        kept = summary_bytes(out)
        rerun = scratch.cli("run", suite, "--output", out)
        observe(rerun)
        assert_clean_exit(rerun, (0,), one_line=False, prefix="")
        said = f"pid {left.pid}, started by an earlier run that died, was still running"
        assert said in " ".join(rerun.stderr.split()), "the rerun did not name the server"
        assert wait_until(lambda: left.poll() is not None, 30), "the server still runs"
        assert_kept(kept, summary_bytes(out))
        observe(rerun, "stopped it")
    finally:
        if left.poll() is None:
            os.killpg(left.pid, signal.SIGKILL)
        left.wait()


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F10",
            "two writers on one --output",
            "the second exits 2 naming the holder (pid, host, since); the first exits 0, records "
            "intact",
            f"{FAULTS_TEST}::test_a_second_writer_is_refused_naming_the_holder_and_the_first_run_"
            "is_intact",
            server=True,
        )
    ],
)
def test_two_writers(case: FaultCase, scratch: Scratch, observe: Observed) -> None:
    folder = scratch.dir("two-writers")
    suite, tag = scratch.suite(folder, step_ms=25.0, concurrency=(1,), max_tokens=64)
    out = folder / "results"
    first = scratch.popen("run", suite, "--output", out, "--server", "eagle3")
    assert wait_until(lambda: in_flight(out) or first.poll() is not None), "no cell in flight"
    second = scratch.cli("run", suite, "--output", out, "--server", "eagle3")
    done = scratch.finish(first)
    observe(second)
    assert_clean_exit(second, (2,), f"another specbench is writing here (pid {first.pid} on")
    assert done.code == 0, f"the first writer exited {done.code}: {done.last}"
    assert len(summary_bytes(out)) == 1, f"{len(summary_bytes(out))} cells saved, expected 1"
    assert_consistent(out)
    assert_no_leftovers(tag)


@pytest.mark.parametrize(
    ("case", "climb"),
    [
        case(
            "F11",
            "server restart between the scrapes, counters climb back above",
            "cell failed by the server's identity (process_start_time_seconds), exit 1, no summary",
            f"{FAULTS_TEST}::test_a_server_restart_inside_the_window_fails_the_cell_even_when_"
            "counters_climb",
            True,
            server=True,
        ),
        case(
            "F12",
            "server restart between the scrapes, counters go down",
            "cell failed (a restart), exit 1, no summary",
            "tests/unit/metrics/test_prometheus.py::test_a_counter_that_went_down_is_a_restart_"
            "error",
            False,
            server=True,
        ),
    ],
)
def test_a_server_restart_inside_the_window(
    case: FaultCase, climb: bool, scratch: Scratch, observe: Observed
) -> None:
    folder = scratch.dir("restart")
    out = folder / "results"
    slow = ("--model", "m", "--step-ms", "6", "--seed", "1")
    with running_emulator(*slow) as first, running_emulator(*slow) as second:
        if climb:  # the "restarted" server has served more: no counter goes down
            warm = scratch.cli(*bench_argv(second, folder / "w", "--max-tokens", "48"))
            assert warm.code == 0, f"warming the second server failed: {warm.last}"
        with fault_proxy(first) as proxy:
            bench = scratch.popen(*bench_argv(proxy.url, out, "--max-tokens", "48"))
            assert wait_until(lambda: in_flight(out) or bench.poll() is not None), "no window"
            proxy.switch(second)
            outcome = scratch.finish(bench)
    observe(outcome)
    assert_clean_exit(outcome, (1,), "cell(s) failed", one_line=False)
    assert not summary_bytes(out), f"{DATA_LOSS}the cell was saved across a restart"
    failure = next(out.rglob("failure.json"), None)
    assert failure is not None, "no failure.json"
    message = json.loads(failure.read_text())["message"]
    assert "restart" in message, f"failure.json does not name a restart: {message}"
    observe(outcome, f"failure.json: {message[:90]}")


@pytest.mark.parametrize(
    "case",
    [
        case(
            "F13",
            "the server killed (kill -9) mid-campaign",
            "restarted (restart 1/2); that cell failed, later cells saved; exit 1; rerun completes",
            f"{CAMPAIGN_TEST}::test_a_server_killed_mid_campaign_is_restarted_and_later_cells_"
            "succeed",
            server=True,
        )
    ],
)
def test_the_server_killed_mid_campaign(
    case: FaultCase, scratch: Scratch, observe: Observed
) -> None:
    folder = scratch.dir("server-killed")
    suite, tag = scratch.suite(folder, step_ms=6.0, concurrency=(1, 2, 4), max_tokens=48)
    out = folder / "results"
    process = scratch.popen("run", suite, "--output", out, "--server", "eagle3")
    first_cell = out / "eagle3" / "tiny" / "c1" / "r0" / "summary.json"
    assert wait_until(first_cell.exists), "the first cell never completed"
    kept = summary_bytes(out)
    for pid in pids_of(tag):
        os.kill(pid, signal.SIGKILL)
    outcome = scratch.finish(process, 300)
    observe(outcome)
    assert_clean_exit(outcome, (1,), "cell(s) failed", one_line=False)
    assert "restart 1/2" in outcome.stderr, "no restart said"
    assert_kept(kept, summary_bytes(out))
    assert_consistent(out)
    assert_no_leftovers(tag)
    rerun = scratch.rerun(suite, out, "--server", "eagle3")
    cells = len(summary_bytes(out))
    assert cells == 3, f"{cells} of 3 cells after the rerun"
    observe(outcome, f"rerun exit {rerun.code}")
