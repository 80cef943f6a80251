"""Fault-injection sweep of specbench (issue 21): faults survived, bad inputs refused cleanly.

Runs the `specbench` CLI (this checkout, this interpreter) against emulator servers and
small fault-injecting HTTP proxies on 127.0.0.1, one numbered case at a time:

- faults (F01…): signals mid-cell and mid-server-start, kill -9, two writers, a server
  restart inside the window, HTTP 500s, stalls, malformed SSE, invalid JSON chunks,
  connection resets, non-vLLM endpoints, servers that never become ready, a full disk
  (a small tmpfs), read-only and immutable folders, corrupt or cut-off result files, …
- bad inputs (I01…): every CLI number out of range, malformed suites, bad datasets, bad
  paths and wrong folders for the readers.

Each case states what is expected (exit code, one line on stderr, no traceback, no data
loss: completed cells byte-identical, no cell saved as complete from bad data, no process
left behind) and records what it observed; `tests` names the test that injects the same
fault or input. Prints a markdown table and the totals, and writes them as JSON.

    python tools/fault_sweep.py                      # every case (a few minutes)
    python tools/fault_sweep.py --only F01,I07 -v    # some cases, with their stderr
    python tools/fault_sweep.py --list               # the cases, without running them

A case that cannot run here (the tmpfs needs root) is "skip", never counted as passed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness import (
    DATA,
    REPO,
    FaultProxy,
    Outcome,
    bench_argv,
    emulator_process,
    fault_proxy,
    fill,
    free_port,
    in_flight,
    pids_of,
    popen_cli,
    run_cli,
    running_emulator,
    small_disk,
    summary_bytes,
    wait_until,
    write_campaign_suite,
)

RECORDED_RUN = REPO / "tests" / "fixtures" / "runs" / "tiny-vllm-ngram"
RECORDED_CELL = Path("ngram") / "lossless-prompts" / "c1" / "r0"
PLACEHOLDERS = REPO / "tests" / "fixtures" / "speed_bench_placeholders" / "data"
FAULTS_TEST = "tests/e2e/test_faults_emulator.py"


# --- what a case observed ---------------------------------------------------------------


@dataclass
class Result:
    """A case's verdict: `status` is pass, fail or skip; `data_loss` marks lost or bad data."""

    id: str
    kind: str
    name: str
    expected: str
    tests: str
    status: str = "pass"
    observed: str = ""
    data_loss: bool = False
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Check:
    """Collects the problems of one case; `observe` sets what the table shows."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.data_loss = False
        self.observed = ""
        self.skipped: str | None = None

    def fail(self, problem: str, *, loss: bool = False) -> None:
        self.problems.append(problem)
        self.data_loss = self.data_loss or loss

    def that(self, condition: bool, problem: str, *, loss: bool = False) -> bool:
        if not condition:
            self.fail(problem, loss=loss)
        return condition

    def observe(self, outcome: Outcome, extra: str = "") -> None:
        last = outcome.last.replace("|", "/")
        if len(last) > 150:
            last = last[:147] + "..."
        self.observed = f"exit {outcome.code}; {last}" + (f"; {extra}" if extra else "")

    def clean_exit(
        self,
        outcome: Outcome,
        codes: tuple[int, ...],
        contains: str | None = None,
        *,
        one_line: bool = True,
        prefix: str = "error: ",
    ) -> None:
        """Exit code in `codes`, no traceback, and (for errors) one line naming the problem."""
        self.observe(outcome)
        self.that(outcome.code in codes, f"exit {outcome.code}, expected {codes}")
        self.that("Traceback" not in outcome.stderr, "a traceback on stderr")
        if one_line:
            self.that(len(outcome.lines) == 1, f"{len(outcome.lines)} lines on stderr, not 1")
        elif prefix:  # after a campaign's progress lines: the message is one line, the last
            said = sum(line.startswith(prefix) for line in outcome.lines)
            self.that(said == 1, f"{said} lines start {prefix!r}, not 1")
        if prefix:
            self.that(outcome.last.startswith(prefix), f"the last line does not start {prefix!r}")
        if contains is not None:
            self.that(contains in outcome.last, f"the message lacks {contains!r}")

    def interrupted(self, outcome: Outcome, sig: int, code: int) -> None:
        """Stopped by `sig`: exit `code`, the message `interrupted: interrupted by SIG…`."""
        name = signal.Signals(sig).name
        self.clean_exit(
            outcome, (code,), f"interrupted by {name}", one_line=False, prefix="interrupted: "
        )

    def ignored(self, outcome: Outcome, out: Path, cells: int) -> None:
        """A signal that stayed ignored: exit 0, all `cells` cells saved."""
        self.clean_exit(outcome, (0,), one_line=False, prefix="")
        self.that(
            len(summary_bytes(out)) == cells, f"{len(summary_bytes(out))} of {cells} cells saved"
        )

    def kept(self, before: dict[Path, bytes], after: dict[Path, bytes]) -> None:
        """Completed cells are byte-identical afterwards (data loss otherwise)."""
        changed = [str(p) for p in before if after.get(p) != before[p]]
        self.that(not changed, f"completed cells changed or lost: {changed}", loss=True)

    def consistent(self, root: Path) -> None:
        """No cell saved as complete from bad data: each summary agrees with its records."""
        for problem in saved_cell_problems(root):
            self.fail(problem, loss=True)

    def no_leftovers(self, tag: str, wait_s: float = 30.0) -> None:
        deadline = time.monotonic() + wait_s
        while pids_of(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = pids_of(tag)
        self.that(not left, f"processes left behind: {left}")
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def saved_cell_problems(root: Path) -> list[str]:
    """Saved cells whose records disagree with their summary, or that hold a harness error."""
    problems = []
    for path in sorted(root.rglob("summary.json")):
        if path.parent.name == "report" or "report" in path.relative_to(root).parts:
            continue
        try:
            summary = json.loads(path.read_text())
            rows = [json.loads(line) for line in (path.parent / "requests.jsonl").open()]
        except (OSError, ValueError) as error:
            problems.append(f"{path.parent}: unreadable cell ({error})")
            continue
        failed = sum(row.get("error_type") is not None for row in rows)
        if len(rows) != summary.get("num_requests") or failed != summary.get("num_failed"):
            problems.append(
                f"{path.parent}: {len(rows)} records ({failed} failed) but the summary counts "
                f"{summary.get('num_requests')} ({summary.get('num_failed')} failed)"
            )
        harness = [r["error_type"] for r in rows if r.get("error_type") in HARNESS_ERRORS]
        if harness:
            problems.append(f"{path.parent}: saved with requests the harness broke: {harness}")
    return problems


#: Error types a request only gets when the harness itself broke it.
HARNESS_ERRORS = {"SystemExit", "KeyboardInterrupt", "CancelledError", "Interrupted"}


# --- the sweep's workspace ----------------------------------------------------------------


class Sweep:
    """A scratch folder, the CLI, emulators and proxies, shared by the cases of one sweep."""

    def __init__(self, root: Path, verbose: bool = False) -> None:
        self.root = root
        self.verbose = verbose
        self._count = 0
        self._complete: Path | None = None
        self._baseline: Path | None = None
        #: An emulator serving max_model_len 64, for `bench` inputs refused at a live server.
        self.emulator_url = ""

    def dir(self, name: str) -> Path:
        self._count += 1
        path = self.root / f"{self._count:03d}-{name}"
        path.mkdir(parents=True)
        return path

    def suite(
        self,
        folder: Path,
        *,
        step_ms: float = 1.0,
        concurrency: tuple[int, ...] = (1, 4),
        max_tokens: int = 16,
        extra: str = "",
    ) -> tuple[Path, str]:
        """An emulator suite with a unique model name (finds its servers in /proc)."""
        path, tag = write_campaign_suite(
            folder, step_ms=step_ms, concurrency=concurrency, max_tokens=max_tokens
        )
        path.write_text(path.read_text() + extra)
        return path, tag

    def cli(
        self, *args: str | Path, timeout: float = 300, env: dict[str, str] | None = None
    ) -> Outcome:
        try:
            done = run_cli(*args, timeout=timeout, env={**os.environ, **(env or {})})
        except subprocess.TimeoutExpired as error:
            return Outcome(None, str(error.stdout or ""), f"timed out after {timeout} s")
        if self.verbose:
            print(f"  $ specbench {' '.join(map(str, args))}\n  -> {done.returncode}")
            print("  " + "\n  ".join(done.stderr.splitlines()[-5:]))
        return Outcome(done.returncode, done.stdout, done.stderr)

    def popen(
        self, *args: str | Path, ignore_sigint: bool = False, **kwargs: Any
    ) -> subprocess.Popen[str]:
        """`specbench ARGS` in the background; SIGINT as a terminal gives it, or ignored as
        `specbench … &` from a script gives it (whatever this process inherited)."""
        disposition = signal.SIG_IGN if ignore_sigint else signal.SIG_DFL

        def sigint() -> None:
            signal.signal(signal.SIGINT, disposition)

        return popen_cli(*args, preexec_fn=sigint, **kwargs)

    def rerun(self, check: Check, suite: Path, out: Path, *extra: str) -> Outcome:
        """`run SUITE --output OUT` again, which must exit 0."""
        again = self.cli("run", suite, "--output", out, *extra)
        check.that(again.code == 0, f"the rerun exited {again.code}: {again.last}")
        return again

    @staticmethod
    def finish(process: subprocess.Popen[str], timeout: float = 180) -> Outcome:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            return Outcome(None, stdout, f"timed out after {timeout} s\n{stderr}")
        return Outcome(process.returncode, stdout, stderr)

    def complete_campaign(self) -> Path:
        """A finished 4-cell campaign (measured once per sweep); cases work on copies."""
        if self._complete is None:
            folder = self.dir("complete-campaign")
            suite, _ = self.suite(folder, concurrency=(1, 2), max_tokens=8)
            out = folder / "results"
            done = self.cli("run", suite, "--output", out)
            if done.code != 0 or len(summary_bytes(out)) != 4:
                raise RuntimeError(f"the reference campaign failed: {done.last}")
            self._complete = folder
        return self._complete

    def campaign_copy(self, name: str) -> tuple[Path, Path]:
        """(suite, results) of a fresh copy of the finished campaign."""
        source = self.complete_campaign()
        folder = self.dir(name)
        shutil.copytree(source / "results", folder / "results")
        shutil.copy(source / "suite.toml", folder / "suite.toml")
        return folder / "suite.toml", folder / "results"

    def recorded_copy(self, name: str) -> Path:
        """A copy of the recorded real-vLLM run (tests/fixtures/runs/tiny-vllm-ngram)."""
        target = self.dir(name) / "run"
        shutil.copytree(RECORDED_RUN, target)
        return target

    def baseline(self) -> Path:
        if self._baseline is None:
            self._baseline = self.dir("baseline") / "baseline.json"
            done = self.cli("baseline", "save", RECORDED_RUN, "--out", self._baseline)
            if done.code != 0:
                raise RuntimeError(f"baseline save failed: {done.last}")
        return self._baseline


# --- the cases ----------------------------------------------------------------------------


@dataclass
class Case:
    id: str
    kind: str  # "fault" or "input"
    name: str
    expected: str
    tests: str
    run: Callable[[Sweep, Check], None]


CASES: list[Case] = []


def register(
    kind: str, name: str, expected: str, tests: str, run: Callable[[Sweep, Check], None]
) -> None:
    """Add a case, numbered in the order added within its kind: F01… faults, I01… inputs."""
    number = sum(c.kind == kind for c in CASES) + 1
    prefix = {"fault": "F", "input": "I"}[kind]
    CASES.append(Case(f"{prefix}{number:02d}", kind, name, expected, tests, run))


def bound(run: Callable[..., object], *args: Any, **options: Any) -> Callable[[Sweep, Check], None]:
    """A case of a runner that several cases share: `run(sweep, check, *args, **options)`."""

    def case(sweep: Sweep, check: Check) -> None:
        run(sweep, check, *args, **options)

    return case


def stop_mid_cell(sweep: Sweep, check: Check, sig: int, code: int, ignore: bool = False) -> None:
    """A campaign stopped by `sig` while a cell is in flight (after one cell completed)."""
    folder = sweep.dir(f"signal-{sig}")
    suite, tag = sweep.suite(folder, step_ms=6.0, concurrency=(1, 8), max_tokens=48)
    out = folder / "results"

    process = sweep.popen("run", suite, "--output", out, ignore_sigint=ignore)
    if not wait_until(
        lambda: (summary_bytes(out) and in_flight(out)) or process.poll() is not None
    ):
        check.fail("no cell in flight after 120 s")
    kept = summary_bytes(out)
    for _ in range(5 if ignore else 1):
        if process.poll() is None:
            process.send_signal(sig)
            time.sleep(0.05)
    outcome = sweep.finish(process)
    if ignore:
        check.ignored(outcome, out, 4)
    else:
        check.interrupted(outcome, sig, code)
        check.that(summary_bytes(out) == kept, "the in-flight cell was saved", loss=True)
    check.consistent(out)
    check.no_leftovers(tag)
    if not ignore:
        measured = rerun_measures_the_rest(sweep, check, suite, out, kept)
        check.observe(outcome, f"kept {len(kept)} cells; rerun: {measured}")


def rerun_measures_the_rest(
    sweep: Sweep, check: Check, suite: Path, out: Path, kept: dict[Path, bytes]
) -> str:
    """A rerun of the 4-cell campaign measures the cells not `kept` and leaves those
    byte-identical; what it said."""
    rerun = sweep.rerun(check, suite, out)
    measured = f"{4 - len(kept)} cells measured, {len(kept)} already complete"
    check.that(measured in rerun.stdout, f"the rerun did not say {measured!r}")
    check.kept(kept, summary_bytes(out))
    return measured


def stop_mid_start(sweep: Sweep, check: Check, sig: int, code: int, ignore: bool = False) -> None:
    """A campaign stopped by `sig` while its first server is starting (not yet ready)."""
    folder = sweep.dir(f"start-signal-{sig}")
    suite, tag = sweep.suite(folder, concurrency=(1,), max_tokens=8)
    out = folder / "results"

    process = sweep.popen("run", suite, "--output", out, ignore_sigint=ignore)
    started = wait_until(lambda: pids_of(tag) or process.poll() is not None, 60)
    check.that(bool(started) and process.poll() is None, "no server start seen")
    check.that(not in_flight(out) and not summary_bytes(out), "the server was already measuring")
    if sig == signal.SIGKILL:
        process.kill()
        outcome = sweep.finish(process)
        check.observe(outcome)
        check.no_leftovers(tag)
        rerun = sweep.rerun(check, suite, out)
        check.observe(outcome, f"server gone; rerun exit {rerun.code}")
    else:
        process.send_signal(sig)
        outcome = sweep.finish(process)
        if ignore:
            check.ignored(outcome, out, 2)
        else:
            check.interrupted(outcome, sig, code)
            check.that(not summary_bytes(out), "a cell was saved", loss=True)
        check.no_leftovers(tag)
    check.consistent(out)


def f_kill9_mid_cell(sweep: Sweep, check: Check) -> None:
    folder = sweep.dir("kill9")
    suite, tag = sweep.suite(folder, step_ms=6.0, concurrency=(1, 8), max_tokens=48)
    out = folder / "results"
    process = sweep.popen("run", suite, "--output", out)
    check.that(wait_until(lambda: summary_bytes(out) and in_flight(out)), "no cell in flight")
    kept = summary_bytes(out)
    process.kill()
    outcome = sweep.finish(process)
    check.no_leftovers(tag)
    measured = rerun_measures_the_rest(sweep, check, suite, out, kept)
    check.consistent(out)
    check.observe(outcome, f"no orphan; rerun: {measured}")


def f_left_server(sweep: Sweep, check: Check) -> None:
    from specbench.launch.host import process_identity
    from specbench.store.manifest import update_manifest

    suite, out = sweep.campaign_copy("left-server")
    tag = uuid.uuid4().hex[:12]
    left = emulator_process(free_port(), "--model", f"left-{tag}")
    try:
        wait_until(lambda: left.pid in pids_of(tag), 30)
        identity = process_identity(left.pid)
        update_manifest(out, lambda m: m.with_server("eagle3", process=identity))
        kept = summary_bytes(out)
        rerun = sweep.cli("run", suite, "--output", out)
        check.clean_exit(rerun, (0,), one_line=False, prefix="")
        said = f"pid {left.pid}, started by an earlier run that died, was still running"
        check.that(said in " ".join(rerun.stderr.split()), "the rerun did not name the server")
        check.that(wait_until(lambda: left.poll() is not None, 30), "the server still runs")
        check.kept(kept, summary_bytes(out))
        check.observe(rerun, "stopped it" if left.poll() is not None else "still running")
    finally:
        if left.poll() is None:
            os.killpg(left.pid, signal.SIGKILL)
        left.wait()


def f_two_writers(sweep: Sweep, check: Check) -> None:
    folder = sweep.dir("two-writers")
    suite, tag = sweep.suite(folder, step_ms=25.0, concurrency=(1,), max_tokens=64)
    out = folder / "results"
    first = sweep.popen("run", suite, "--output", out, "--server", "eagle3")
    check.that(wait_until(lambda: in_flight(out) or first.poll() is not None), "no cell in flight")
    second = sweep.cli("run", suite, "--output", out, "--server", "eagle3")
    done = sweep.finish(first)
    check.clean_exit(second, (2,), f"another specbench is writing here (pid {first.pid} on")
    check.that(done.code == 0, f"the first writer exited {done.code}: {done.last}")
    check.that(len(summary_bytes(out)) == 1, f"{len(summary_bytes(out))} cells saved, expected 1")
    check.consistent(out)
    check.no_leftovers(tag)


def restart_inside_window(sweep: Sweep, check: Check, climb: bool) -> None:
    folder = sweep.dir("restart")
    out = folder / "results"
    slow = ("--model", "m", "--step-ms", "6", "--seed", "1")
    with running_emulator(*slow) as first, running_emulator(*slow) as second:
        if climb:  # the "restarted" server has served more: no counter goes down
            warm = sweep.cli(*bench_argv(second, folder / "w", "--max-tokens", "48"))
            check.that(warm.code == 0, f"warming the second server failed: {warm.last}")
        with fault_proxy(first) as proxy:
            bench = sweep.popen(*bench_argv(proxy.url, out, "--max-tokens", "48"))
            check.that(wait_until(lambda: in_flight(out) or bench.poll() is not None), "no window")
            proxy.switch(second)
            outcome = sweep.finish(bench)
    check.clean_exit(outcome, (1,), "cell(s) failed", one_line=False)
    failure = next(out.rglob("failure.json"), None)
    check.that(not summary_bytes(out), "the cell was saved across a restart", loss=True)
    if check.that(failure is not None, "no failure.json") and failure is not None:
        message = json.loads(failure.read_text())["message"]
        check.that("restart" in message, f"failure.json does not name a restart: {message}")
        check.observe(outcome, f"failure.json: {message[:90]}")


def f_server_killed(sweep: Sweep, check: Check) -> None:
    folder = sweep.dir("server-killed")
    suite, tag = sweep.suite(folder, step_ms=6.0, concurrency=(1, 2, 4), max_tokens=48)
    out = folder / "results"
    process = sweep.popen("run", suite, "--output", out, "--server", "eagle3")
    first_cell = out / "eagle3" / "tiny" / "c1" / "r0" / "summary.json"
    check.that(wait_until(first_cell.exists), "the first cell never completed")
    kept = summary_bytes(out)
    for pid in pids_of(tag):
        os.kill(pid, signal.SIGKILL)
    outcome = sweep.finish(process, 300)
    check.clean_exit(outcome, (1,), "cell(s) failed", one_line=False)
    check.that("restart 1/2" in outcome.stderr, "no restart said")
    check.kept(kept, summary_bytes(out))
    check.consistent(out)
    check.no_leftovers(tag)
    rerun = sweep.rerun(check, suite, out, "--server", "eagle3")
    check.that(
        len(summary_bytes(out)) == 3, f"{len(summary_bytes(out))} of 3 cells after the rerun"
    )
    check.observe(outcome, f"rerun exit {rerun.code}")


def proxied_bench(
    sweep: Sweep,
    check: Check,
    fault_name: str,
    *,
    every: int = 1,
    codes: tuple[int, ...] = (1,),
    contains: str | None = "cell(s) failed",
    timeout: str = "30",
) -> tuple[Outcome, Path, FaultProxy]:
    """`bench` through a proxy that breaks every `every`-th generation request."""
    folder = sweep.dir(f"proxy-{fault_name}")
    out = folder / "results"
    with (
        running_emulator("--model", "m", "--step-ms", "1", "--prefill-ms", "2") as upstream,
        fault_proxy(upstream, fault_name, every) as proxy,
    ):
        options = ("--warmup", "0", "--max-tokens", "32", "--concurrency", "2")
        outcome = sweep.cli(*bench_argv(proxy.url, out, *options, "--request-timeout", timeout))
    check.clean_exit(
        outcome, codes, contains, one_line=codes == (2,), prefix="" if 0 in codes else "error: "
    )
    check.consistent(out)
    if codes == (1,):
        check.that(
            not summary_bytes(out), "a cell saved although every request was broken", loss=True
        )
        check.that(next(out.rglob("failure.json"), None) is not None, "no failure.json")
    return outcome, out, proxy


def only_summary(out: Path) -> dict[str, Any]:
    found = list(out.rglob("summary.json"))
    return json.loads(found[0].read_text()) if len(found) == 1 else {}


def f_http500_some(sweep: Sweep, check: Check) -> None:
    outcome, out, proxy = proxied_bench(sweep, check, "http500", every=3, codes=(0,), contains=None)
    summary = only_summary(out)
    failed = summary.get("num_failed", 0)
    check.that(failed >= proxy.hits > 0, f"num_failed {failed} < {proxy.hits} injected", loss=True)
    check.observe(
        outcome, f"{failed} failed of {summary.get('num_requests')}, {proxy.hits} injected"
    )


def f_malformed_sse(sweep: Sweep, check: Check) -> None:
    outcome, out, _ = proxied_bench(sweep, check, "malformed_sse", codes=(0,), contains=None)
    summary = only_summary(out)
    check.that(summary.get("num_failed") == 0, f"num_failed {summary.get('num_failed')}")
    check.observe(outcome, f"num_failed {summary.get('num_failed')}")


def f_unreachable(sweep: Sweep, check: Check) -> None:
    out = sweep.dir("unreachable") / "o"
    port = free_port()
    outcome = sweep.cli(*bench_argv(f"http://127.0.0.1:{port}", out))
    check.clean_exit(outcome, (2,), "unreachable")


def fake_vllm(folder: Path, tag: str, body: str) -> Path:
    """A `vllm` stand-in whose path holds `tag`: answers `--help` probes, else runs `body`."""
    script = folder / f"vllm-{tag}"
    script.write_text(
        f"#!{sys.executable}\nimport sys, time\n"
        "if any(a.startswith('--help') for a in sys.argv):\n    sys.exit(0)\n" + body + "\n"
    )
    script.chmod(0o755)
    return script


def vllm_suite(folder: Path, tag: str) -> Path:
    suite = folder / "suite.toml"
    suite.write_text(
        f'name = "never-{tag}"\n[target]\nmodel = "org/m-{tag}"\n'
        "[servers.base]\nbaseline = true\n"
        f'[[workloads]]\ndataset = "{DATA}"\nconcurrency = [1]\nmax_tokens = 8\n'
    )
    return suite


def said_why(check: Check, outcome: Outcome, out: Path, reason: str) -> None:
    """The reason is on stderr and in the cell's failure.json."""
    failure = next(out.rglob("failure.json"), None)
    message = json.loads(failure.read_text())["message"] if failure else ""
    check.that(reason in outcome.stderr, f"stderr does not say {reason!r}")
    check.that(reason in message, f"failure.json does not say {reason!r}")
    check.observe(outcome, f"failure.json: {message[:100]}")


def server_never_starts(
    sweep: Sweep,
    check: Check,
    name: str,
    body: str,
    reason: str,
    *options: str,
    quoted: str | None = None,
) -> None:
    """`run` with a stand-in `vllm` running `body` (`options` after `--vllm-bin`, no
    restarts): one failure saying `reason`, no cell saved, no process left; `quoted`, a
    line of the server's log that stderr must quote."""
    folder = sweep.dir(name)
    tag = uuid.uuid4().hex[:12]
    vllm = fake_vllm(folder, tag, body)
    out = folder / "results"
    suite = vllm_suite(folder, tag)
    restarts = ("--max-restarts", "0")
    outcome = sweep.cli("run", suite, "--output", out, "--vllm-bin", vllm, *options, *restarts)
    check.clean_exit(outcome, (3,), "would not start", one_line=False)
    said_why(check, outcome, out, reason)
    if quoted is not None:
        check.that(quoted in outcome.stderr, "the log is not quoted")
    check.that(not summary_bytes(out), "a cell was saved", loss=True)
    check.no_leftovers(tag)


def f_disk_full_run(sweep: Sweep, check: Check) -> None:
    folder = sweep.dir("disk-full")
    suite, tag = sweep.suite(folder, step_ms=6.0, concurrency=(1, 8), max_tokens=48)
    with small_disk(folder / "disk", "4m") as disk:
        if disk is None:
            check.skipped = "cannot mount a tmpfs here (needs root)"
            return
        out = disk / "results"
        process = sweep.popen("run", suite, "--output", out)
        check.that(wait_until(lambda: summary_bytes(out) and in_flight(out)), "no cell in flight")
        filler = fill(disk)
        outcome = sweep.finish(process)
        check.clean_exit(outcome, (2,), "the disk is full", one_line=False)
        kept = summary_bytes(out)
        check.that(not list(out.rglob("*.tmp")), "a half-written *.tmp left behind")
        check.consistent(out)
        check.no_leftovers(tag)
        filler.unlink()
        rerun = sweep.rerun(check, suite, out)
        check.kept(kept, summary_bytes(out))
        check.that(len(summary_bytes(out)) == 4, "the rerun did not complete the campaign")
        check.observe(outcome, f"kept {len(kept)}; rerun exit {rerun.code}")


def f_disk_full_report(sweep: Sweep, check: Check) -> None:
    _, results = sweep.campaign_copy("disk-full-report")
    with small_disk(results.parent / "disk", "2m") as disk:
        if disk is None:
            check.skipped = "cannot mount a tmpfs here (needs root)"
            return
        report = disk / "report"
        fill(disk)
        outcome = sweep.cli("report", results, "--out", report)
        check.clean_exit(outcome, (2,), "the disk is full")
        empty = [p for p in report.rglob("*") if p.is_file() and p.stat().st_size == 0]
        check.that(not empty, f"0-byte files left: {empty}")
        check.that(not list(report.rglob("*.partial")), "*.partial left")


def f_read_only(sweep: Sweep, check: Check) -> None:
    folder = sweep.dir("read-only")
    suite, tag = sweep.suite(folder, concurrency=(1,), max_tokens=8)
    with small_disk(folder / "ro", "1m") as disk:
        if disk is None:
            check.skipped = "cannot mount a tmpfs here (needs root)"
            return
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        outcome = sweep.cli("run", suite, "--output", disk / "results")
        check.clean_exit(outcome, (2,), "read-only")
    check.no_leftovers(tag)


def f_immutable(sweep: Sweep, check: Check) -> None:
    suite, out = sweep.campaign_copy("immutable")
    shutil.rmtree(out / "eagle3" / "tiny" / "c2")  # a cell left to measure
    kept = summary_bytes(out)
    locked = subprocess.run(["chattr", "+i", str(out)], capture_output=True, check=False)
    if locked.returncode != 0:
        check.skipped = f"chattr +i is not supported here: {locked.stderr.strip()!r}"
        return
    try:
        outcome = sweep.cli("run", suite, "--output", out)
    finally:
        subprocess.run(["chattr", "-i", str(out)], check=False)
    # The file it could not write, never a temporary name.
    check.clean_exit(outcome, (2,), f"error: {out / 'manifest.json'}: Operation not permitted")
    check.kept(kept, summary_bytes(out))


def f_output_file(sweep: Sweep, check: Check) -> None:
    folder = sweep.dir("output-file")
    suite, tag = sweep.suite(folder, concurrency=(1,), max_tokens=8)
    target = folder / "a-file"
    target.write_text("not a folder")
    outcome = sweep.cli("run", suite, "--output", target)
    check.clean_exit(outcome, (2,), "a file stands where a folder is needed")
    check.that(target.read_text() == "not a folder", "the file was changed", loss=True)
    check.no_leftovers(tag)


CORRUPT = {
    "binary": bytes(range(256)) * 4,
    "wrong-shaped": b'{"schema_version": 2, "label": 5}',
}


def corrupt_for_run(sweep: Sweep, check: Check, kind: str) -> None:
    suite, out = sweep.campaign_copy(f"corrupt-{kind}-run")
    path = out / "eagle3" / "tiny" / "c1" / "r0" / "summary.json"
    path.write_bytes(CORRUPT[kind])
    kept = {p: b for p, b in summary_bytes(out).items() if p != path}
    outcome = sweep.cli("run", suite, "--output", out)
    check.clean_exit(outcome, (2,), f"error: {path}: ", one_line=False)
    check.kept(kept, summary_bytes(out))
    check.that(path.read_bytes() == CORRUPT[kind], "the corrupt file was overwritten")


def corrupt_for_reader(sweep: Sweep, check: Check, kind: str, reader: str) -> None:
    run = sweep.recorded_copy(f"corrupt-{kind}-{reader}")
    path = run / RECORDED_CELL / "summary.json"
    path.write_bytes(CORRUPT[kind])
    args: tuple[str | Path, ...] = (reader, run)
    if reader == "gate":
        args = ("gate", run, "--baseline", sweep.baseline())
    outcome = sweep.cli(*args)
    check.clean_exit(outcome, (2,), f"error: {path}: ")


CORRUPT_SUMMARY = (
    "tests/unit/cli/test_corrupt_results.py::test_a_corrupt_summary_is_one_line_for_every_reader"
)


def corrupt_summary_cases() -> list[tuple[str, str, str, Callable[[Sweep, Check], None]]]:
    """Each corrupt summary.json, read back by `run` (resume) and by each reader."""
    cases = []
    for kind in CORRUPT:
        cases.append(
            (
                f"{kind} summary.json, then `run` (resume)",
                "exit 2, one line naming the file and what to do; other cells untouched",
                CORRUPT_SUMMARY,
                bound(corrupt_for_run, kind),
            )
        )
        cases += [
            (
                f"{kind} summary.json, then `{reader}`",
                "exit 2, one line naming the file and what to do",
                CORRUPT_SUMMARY,
                bound(corrupt_for_reader, kind, reader),
            )
            for reader in ("report", "gate", "lossless")
        ]
    return cases


def f_corrupt_manifest(sweep: Sweep, check: Check) -> None:
    run = sweep.recorded_copy("corrupt-manifest")
    (run / "manifest.json").write_bytes(CORRUPT["binary"])
    check.clean_exit(sweep.cli("report", run), (2,), "manifest.json")


def f_truncated_record(sweep: Sweep, check: Check) -> None:
    run = sweep.recorded_copy("truncated-record")
    records = run / RECORDED_CELL / "requests.jsonl"
    data = records.read_bytes()
    records.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 40])
    outcome = sweep.cli("lossless", run)
    check.clean_exit(outcome, (1, 2), None, one_line=False, prefix="")
    said = "holds 4 records, but summary.json counts 5 requests"
    check.that(said in " ".join((outcome.stdout + outcome.stderr).split()), "not said")
    check.observe(outcome, "cut-off file named")


def f_deleted_summary(sweep: Sweep, check: Check) -> None:
    suite, out = sweep.campaign_copy("deleted-summary")
    path = out / "baseline" / "tiny" / "c2" / "r0" / "summary.json"
    path.unlink()
    kept = summary_bytes(out)
    outcome = sweep.cli("run", suite, "--output", out)
    check.clean_exit(outcome, (0,), None, one_line=False, prefix="")
    said = "1 cells measured, 3 already complete"
    check.that(said in outcome.stdout, f"not {said!r}")  # run's tally is a result: stdout
    check.kept(kept, summary_bytes(out))
    check.that(path.exists(), "the cell was not measured again")
    check.consistent(out)
    check.observe(outcome, said)


def f_missing_cell(sweep: Sweep, check: Check) -> None:
    _, out = sweep.campaign_copy("missing-cell")
    shutil.rmtree(out / "eagle3" / "tiny" / "c2")
    report = sweep.cli("report", out, "--format", "md")
    check.clean_exit(report, (0,), None, one_line=False, prefix="")
    for outcome in (report, sweep.cli("lossless", out)):
        text = " ".join((outcome.stdout + outcome.stderr).split())
        check.that("eagle3/tiny/c2/r0" in text and "no results" in text, "the cell is not named")
    check.observe(report, "missing cell named by report and lossless")


def f_secrets(sweep: Sweep, check: Check) -> None:
    folder = sweep.dir("secrets")
    secrets = {"HF_TOKEN": "tok-AAAA1111", "MY_SERVICE_KEY": "key-BBBB2222"}
    table = ", ".join(f'{k} = "{v}"' for k, v in secrets.items())
    suite, tag = sweep.suite(folder, concurrency=(1,), max_tokens=8)
    suite.write_text(
        suite.read_text().replace("seed = 3 }\n", f"seed = 3 }}\nenv = {{ {table} }}\n", 1)
    )
    out = folder / "results"
    outcome = sweep.cli("run", suite, "--output", out)
    check.clean_exit(outcome, (0,), None, one_line=False, prefix="")
    texts = [outcome.stdout, outcome.stderr, (out / "manifest.json").read_text()]
    texts += [p.read_text() for p in (out / "logs").iterdir()]
    leaked = [v for v in secrets.values() for t in texts if v in t]
    check.that(not leaked, f"leaked: {leaked}")
    check.no_leftovers(tag)
    check.observe(outcome, "no secret in manifest, logs or output")


def f_stale_lock(sweep: Sweep, check: Check) -> None:
    suite, out = sweep.campaign_copy("stale-lock")
    (out / ".specbench.lock").write_text("pid 999999 on nowhere since 2020 (garbled")
    outcome = sweep.cli("run", suite, "--output", out)
    check.clean_exit(outcome, (0,), None, one_line=False, prefix="")
    check.that("0 cells measured, 4 already complete" in outcome.stdout, "not a plain resume")


#: The faults, in their order (F01…): (name, expected, the test injecting it, the case).
FAULTS: list[tuple[str, str, str, Callable[[Sweep, Check], None]]] = [
    (
        "SIGTERM mid-cell",
        "exit 143, `interrupted: …SIGTERM`; in-flight cell not saved; rerun measures the rest",
        f"{FAULTS_TEST}::test_sigterm_mid_cell_discards_the_cell_exits_143_and_keeps_the_others",
        bound(stop_mid_cell, signal.SIGTERM, 143),
    ),
    (
        "SIGINT (Ctrl-C) mid-cell",
        "exit 130, `interrupted: …SIGINT`; in-flight cell not saved; rerun measures the rest",
        "tests/e2e/test_campaign_emulator.py::test_sigint_mid_campaign_stops_servers_keeps_cells_and_"
        "rerun_completes",
        bound(stop_mid_cell, signal.SIGINT, 130),
    ),
    (
        "SIGINT inherited as ignored, mid-cell",
        "the signal stays ignored: exit 0, all 4 cells saved with no request broken",
        f"{FAULTS_TEST}::test_sigint_inherited_as_ignored_stays_ignored",
        bound(stop_mid_cell, signal.SIGINT, 0, ignore=True),
    ),
    (
        "SIGTERM while the first server starts",
        "exit 143, one `interrupted` line, the starting server stopped, no cell saved",
        "tests/e2e/test_launch_emulator.py::test_sigterm_inside_the_block_stops_the_server_and_"
        "restores_the_handler",
        bound(stop_mid_start, signal.SIGTERM, 143),
    ),
    (
        "SIGINT while the first server starts",
        "exit 130, one `interrupted` line, the starting server stopped, no cell saved",
        "tests/e2e/test_launch_emulator.py::test_sigint_during_startup_kills_the_starting_server",
        bound(stop_mid_start, signal.SIGINT, 130),
    ),
    (
        "SIGINT inherited as ignored, while the server starts",
        "ignored: exit 0, both cells saved",
        "tests/unit/common/test_interrupt.py",
        bound(stop_mid_start, signal.SIGINT, 0, ignore=True),
    ),
    (
        "kill -9 of the campaign while its server starts",
        "the starting server dies with the campaign (no orphan); a rerun completes, exit 0",
        "tests/e2e/test_faults_emulator.py::test_kill_9_of_the_campaign_takes_its_server_down_and_a_"
        "rerun_completes",
        bound(stop_mid_start, signal.SIGKILL, 0),
    ),
    (
        "kill -9 of the campaign mid-cell",
        "no orphan server; the lock is released; rerun measures the rest, completed cells "
        "identical",
        f"{FAULTS_TEST}::test_kill_9_of_the_campaign_takes_its_server_down_and_a_rerun_completes",
        f_kill9_mid_cell,
    ),
    (
        "a server left running by a dead campaign",
        "the rerun names it (pid) and stops it, exit 0; a reused pid is left alone",
        f"{FAULTS_TEST}::test_a_rerun_stops_a_server_a_dead_campaign_left_running",
        f_left_server,
    ),
    (
        "two writers on one --output",
        "the second exits 2 naming the holder (pid, host, since); the first exits 0, records "
        "intact",
        f"{FAULTS_TEST}::test_a_second_writer_is_refused_naming_the_holder_and_the_first_run_is_intact",
        f_two_writers,
    ),
    (
        "server restart between the scrapes, counters climb back above",
        "cell failed by the server's identity (process_start_time_seconds), exit 1, no summary",
        f"{FAULTS_TEST}::test_a_server_restart_inside_the_window_fails_the_cell_even_when_counters_"
        "climb",
        bound(restart_inside_window, climb=True),
    ),
    (
        "server restart between the scrapes, counters go down",
        "cell failed (a restart), exit 1, no summary",
        "tests/unit/metrics/test_prometheus.py::test_a_counter_that_went_down_is_a_restart_error",
        bound(restart_inside_window, climb=False),
    ),
    (
        "the server killed (kill -9) mid-campaign",
        "restarted (restart 1/2); that cell failed, later cells saved; exit 1; rerun completes",
        "tests/e2e/test_campaign_emulator.py::test_a_server_killed_mid_campaign_is_restarted_and_"
        "later_cells_succeed",
        f_server_killed,
    ),
    (
        "HTTP 500 on every generation request",
        "the cell fails (`all N requests failed`), failure.json, exit 1, no summary",
        "tests/e2e/test_bench_emulator.py (http_500 records: tests/unit/client)",
        bound(proxied_bench, "http500"),
    ),
    (
        "HTTP 500 on every 3rd generation request",
        "the cell is saved with the failures counted (num_failed ≥ injected), warned, exit 0",
        "tests/unit/measure/test_checks.py::test_failures_skipped_turns_and_preemptions_are_stated",
        f_http500_some,
    ),
    (
        "stalled stream (no byte for longer than --request-timeout)",
        "each stalled request is a `timeout` record; all stalled: cell failed, exit 1",
        "tests/unit/client/test_client_timeout.py::test_stalled_stream_becomes_a_timeout_record",
        bound(proxied_bench, "stall", timeout="1"),
    ),
    (
        "malformed SSE (lines that are no field, comments, unknown fields)",
        "ignored as the SSE spec says: exit 0, no failed request, tokens match the server",
        "tests/unit/client/test_sse.py::test_multiline_data_comments_and_missing_final_blank_line",
        f_malformed_sse,
    ),
    (
        "invalid JSON chunk in the stream",
        "a `bad_chunk` record per stream; all broken: cell failed, exit 1",
        "tests/unit/client/test_client_fixtures.py",
        bound(proxied_bench, "invalid_json"),
    ),
    (
        "connection reset mid-stream",
        "failed records (ClientPayloadError…); all reset: cell failed, exit 1",
        "tests/unit/client/test_client_fixtures.py::test_a_stream_cut_before_done_is_a_failed_record",
        bound(proxied_bench, "reset"),
    ),
    (
        "stream ended cleanly before [DONE]",
        "`incomplete_stream` records; all cut: cell failed, exit 1",
        "tests/unit/client/test_client_fixtures.py::test_aiohttp_a_stream_cut_just_before_done_is_a_"
        "failed_record",
        bound(proxied_bench, "truncate"),
    ),
    (
        "non-vLLM endpoint answering HTML pages",
        "refused before any cell: exit 2, one line naming the endpoint",
        "tests/e2e/test_bench_emulator.py::test_bad_input_gets_one_line_and_exit_2",
        bound(proxied_bench, "html", codes=(2,), contains="/"),
    ),
    (
        "non-vLLM endpoint answering 404 everywhere",
        "refused before any cell: exit 2, one line naming the endpoint",
        "tests/e2e/test_bench_emulator.py::test_bad_input_gets_one_line_and_exit_2",
        bound(proxied_bench, "not_found", codes=(2,), contains="/"),
    ),
    (
        "endpoint refusing connections",
        "exit 2, one line: the endpoint is unreachable",
        "tests/e2e/test_bench_emulator.py::test_bad_input_gets_one_line_and_exit_2",
        f_unreachable,
    ),
    (
        "a server that never becomes ready (--ready-timeout 3)",
        "one failure (exit 3, a server would not start) naming the timeout on stderr and in "
        "failure.json; server killed",
        "tests/e2e/test_launch_emulator.py::test_ready_timeout_kills_a_server_that_never_serves",
        bound(
            server_never_starts,
            "never-ready",
            "print('loading', flush=True)\ntime.sleep(300)",
            "was not ready after 3 s",
            "--ready-timeout",
            "3",
        ),
    ),
    (
        "a server that exits during start-up",
        "one failure (exit 3, a server would not start), the log's last line quoted; no process "
        "left",
        "tests/e2e/test_launch_emulator.py::test_fake_vllm_start_error_and_port_in_use",
        bound(
            server_never_starts,
            "start-error",
            "sys.exit('vllm serve: error: CUDA out of memory (injected)')",
            "exited with code 1 before it was ready; ",
            quoted="CUDA out of memory (injected)",
        ),
    ),
    (
        "disk full mid-campaign (4 MB tmpfs filled while a cell runs)",
        "exit 2, one line naming the file and `the disk is full`; completed cells kept, no *.tmp; "
        "after freeing space a rerun completes",
        f"{FAULTS_TEST}::test_disk_full_mid_campaign_keeps_cells_and_a_rerun_completes",
        f_disk_full_run,
    ),
    (
        "disk full during `report`",
        "exit 2, one line `the disk is full`; no 0-byte figure or *.partial left",
        f"{FAULTS_TEST}::test_disk_full_mid_campaign_keeps_cells_and_a_rerun_completes",
        f_disk_full_report,
    ),
    (
        "read-only results folder (tmpfs remounted ro)",
        "exit 2, one line `the file system is read-only`, no server started",
        f"{FAULTS_TEST}::test_read_only_results_dir_is_one_line_exit_2",
        f_read_only,
    ),
    (
        "immutable results folder (chattr +i) holding completed cells",
        "exit 2, one line naming the file (not a temporary name); completed cells untouched",
        "tests/unit/store/test_files.py::test_a_folder_refusing_the_temporary_file_is_named_by_the_file",
        f_immutable,
    ),
    (
        "--output naming a file",
        "exit 2, one line `a file stands where a folder is needed`; the file untouched",
        f"{FAULTS_TEST}::test_output_that_is_a_file_is_one_line_exit_2",
        f_output_file,
    ),
    *corrupt_summary_cases(),
    (
        "binary manifest.json, then `report`",
        "exit 2, one line naming manifest.json and what to do",
        "tests/unit/cli/test_corrupt_results.py::test_a_corrupt_manifest_is_one_line_with_what_to_do",
        f_corrupt_manifest,
    ),
    (
        "cut-off last record in a finished cell, then `lossless`",
        "the cut-off file is named (records < summary), the check cannot pass (exit ≠ 0)",
        "tests/unit/lossless/test_lossless_recorded_run.py::test_a_cut_off_last_record_is_said_and_the_"
        "check_cannot_pass",
        f_truncated_record,
    ),
    (
        "deleted summary.json, then resume",
        "the rerun measures exactly that cell (1 measured, 3 complete), the others byte-identical",
        "tests/e2e/test_campaign_emulator.py::test_campaign_runs_every_cell_then_a_rerun_measures_none",
        f_deleted_summary,
    ),
    (
        "a cell folder deleted, then `report` and `lossless`",
        "both name the missing cell and how to measure it",
        f"{FAULTS_TEST}::test_report_and_lossless_name_the_cells_a_campaign_did_not_measure",
        f_missing_cell,
    ),
    (
        "secrets in a suite's env",
        "never written: manifest, logs, stdout and stderr hold `<redacted>`",
        f"{FAULTS_TEST}::test_secrets_in_a_suite_env_never_reach_the_manifest_or_the_screen",
        f_secrets,
    ),
    (
        "a stale lock file left by a dead writer",
        "ignored (no process holds it): the run proceeds, exit 0",
        "tests/unit/store/test_lock.py",
        f_stale_lock,
    ),
]
for _row in FAULTS:
    register("fault", *_row)


# --- bad inputs ---------------------------------------------------------------------------


def bad_input(
    name: str,
    tests: str,
    contains: str,
    build: Callable[[Sweep, Path], list[Any]],
    env: dict[str, str] | None = None,
) -> None:
    """A command line refused before anything runs: exit 2, one line, nothing written."""

    def run(sweep: Sweep, check: Check) -> None:
        folder = sweep.dir("input")
        args = build(sweep, folder)
        out = folder / "o"
        outcome = sweep.cli(*args, env=env)
        check.clean_exit(outcome, (2,), contains)
        check.that(not (out / "logs").exists() and not list(out.rglob("requests.jsonl")), "wrote")

    register("input", name, f"exit 2, one line naming {contains!r}", tests, run)


BAD_OPTIONS = "tests/unit/cli/test_bad_input_lines.py::test_bad_options_get_one_line_and_exit_2"
BENCH_BAD = "tests/e2e/test_bench_emulator.py::test_bad_input_gets_one_line_and_exit_2"


def bench_args(
    *extra: str, endpoint: str = "http://127.0.0.1:9"
) -> Callable[[Sweep, Path], list[Any]]:
    return lambda sweep, folder: bench_argv(endpoint, folder / "o", *extra)


for _option, _value, _tests in [
    ("--concurrency", "99999999999999999999", BAD_OPTIONS),
    ("--concurrency", "0", BENCH_BAD),
    ("--concurrency", "-4", ""),
    ("--concurrency", "65537", ""),
    ("--concurrency", "1,x", BAD_OPTIONS),
    ("--concurrency", "", ""),
    ("--request-timeout", "0", BAD_OPTIONS),
    ("--request-timeout", "-5", BAD_OPTIONS),
    ("--request-timeout", "nan", ""),
    ("--request-timeout", "inf", BAD_OPTIONS),
    ("--temperature", "nan", BAD_OPTIONS),
    ("--temperature", "inf", BAD_OPTIONS),
    ("--temperature", "-1", ""),
    ("--max-tokens", "0", BAD_OPTIONS),
    ("--max-tokens", "-3", ""),
    ("--max-tokens", "lots", ""),
    ("--repeats", "0", ""),
    ("--gpus", "0", ""),
    ("--warmup", "-1", ""),
    ("--num-prompts", "0", ""),
    ("--api", "grpc", ""),
    ("--client", "curl", ""),
]:
    bad_input(f"bench {_option} {_value!r}", _tests, _option, bench_args(_option, _value))

bad_input("bench --endpoint not a URL", "", "not-a-url", bench_args(endpoint="not-a-url"))
bad_input(
    "bench --api-key-env naming an unset variable",
    "",
    "SWEEP_UNSET_KEY",
    bench_args("--api-key-env", "SWEEP_UNSET_KEY"),
)


def bench_on_emulator(
    *extra: str, dataset: str | None = None
) -> Callable[[Sweep, Path], list[Any]]:
    """`bench` against the sweep's emulator (started per case: a bad input must not reach it)."""

    def build(sweep: Sweep, folder: Path) -> list[Any]:
        return bench_argv(sweep.emulator_url, folder / "o", *extra, dataset=dataset or DATA)

    return build


def bench_dataset(name: str, tests: str, contains: str, make: Callable[[Path], str]) -> None:
    bad_input(
        f"bench dataset: {name}",
        tests,
        contains,
        lambda sweep, folder: bench_on_emulator(dataset=make(folder))(sweep, folder),
    )


def write_file(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


bench_dataset("missing file", BENCH_BAD, "nosuch.jsonl", lambda f: str(f / "nosuch.jsonl"))
bench_dataset(
    "a bad JSONL line",
    "tests/unit/data/test_custom.py::test_malformed_line_names_file_and_line",
    "bad.jsonl:2",
    lambda f: write_file(f, "bad.jsonl", '{"category": "a", "turns": ["x"]}\n{bad json\n'),
)
bench_dataset("empty file", BENCH_BAD, "empty.jsonl", lambda f: write_file(f, "empty.jsonl", ""))
bench_dataset(
    "placeholder rows",
    f"{FAULTS_TEST}::test_every_workload_dataset_is_checked_before_any_server_starts",
    "placeholder",
    lambda f: f"speed-bench:qualitative:{PLACEHOLDERS}",
)
bench_dataset("unknown SPEED-Bench config", "", "nosuchsplit", lambda f: "speed-bench:nosuchsplit")
bench_dataset(
    "a row without turns",
    "tests/unit/data/test_custom.py::test_malformed_line_names_file_and_line",
    "noturns.jsonl",
    lambda f: write_file(f, "noturns.jsonl", '{"category": "a"}\n'),
)
bad_input(
    "bench --category unknown",
    "tests/unit/data/test_custom.py::test_unknown_category_names_the_available_ones",
    "nosuch",
    bench_on_emulator("--category", "nosuch"),
)
bad_input(
    "bench --num-prompts above the rows with --strict",
    "",
    "99",
    bench_on_emulator("--num-prompts", "99", "--strict"),
)
bad_input(
    "bench --max-tokens above the server's max_model_len",
    f"{FAULTS_TEST}::test_bench_max_tokens_above_the_served_context_is_refused_before_any_request",
    "max_model_len = 64",
    bench_on_emulator("--max-tokens", "100"),
)

SUITE_BAD = "tests/unit/suite/test_suite.py"
RANGE = f"{SUITE_BAD}::test_numbers_are_range_checked_at_the_boundary"


def run_args(*extra: Any) -> Callable[[Sweep, Path], list[Any]]:
    def build(sweep: Sweep, folder: Path) -> list[Any]:
        suite, _ = sweep.suite(folder)
        return ["run", suite, "--output", folder / "o", *extra]

    return build


for _args, _contains, _tests in [
    (("--max-restarts", "-1"), "--max-restarts", BAD_OPTIONS),
    (("--ready-timeout", "0"), "--ready-timeout", BAD_OPTIONS),
    (
        ("--set", "servers.eagle3"),
        "expected dotted.path=value",
        f"{SUITE_BAD}::test_bad_override_names_the_path",
    ),
    (
        ("--set", "servers.ghost.model=x"),
        "no server 'ghost'",
        f"{SUITE_BAD}::test_set_on_an_unknown_server_name_is_refused",
    ),
    (
        ("--set", "workloads.5.max_tokens=1"),
        "workloads.5",
        f"{SUITE_BAD}::test_bad_override_names_the_path",
    ),
    (
        ("--set", "servers.eagle3.tp=8"),
        "servers.eagle3.tp: unknown key",
        f"{SUITE_BAD}::test_bad_override_names_the_path",
    ),
    (("--set", "workloads.0.concurrency=[99999999999999999999]"), "concurrency", RANGE),
    (("--set", "workloads.0.temperature=nan"), "temperature", RANGE),
    (("--set", "workloads.0.request_timeout_s=-5"), "request_timeout_s", RANGE),
    (("--server", "nosuch"), "nosuch", ""),
    (("--workload", "nosuch"), "nosuch", ""),
    (("--endpoint", "http://127.0.0.1:1"), "--endpoint", ""),
    (
        ("--endpoint", "nosuch=http://127.0.0.1:1"),
        "nosuch",
        "tests/e2e/test_campaign_emulator.py::test_bad_suites_get_one_line_and_exit_2",
    ),
    (("--estimate-from", "."), "--estimate-from", ""),
]:
    bad_input(f"run {' '.join(_args)}", _tests, _contains, run_args(*_args))

bad_input("run: no suite argument", BAD_OPTIONS, "Missing argument", lambda sweep, folder: ["run"])
bad_input("an unknown command", BAD_OPTIONS, "nosuch", lambda sweep, folder: ["nosuch"])
bad_input(
    "run: suite file missing",
    f"{SUITE_BAD}::test_missing_file_and_bad_server_name",
    "does not exist",
    lambda sweep, folder: ["run", folder / "nope.toml", "--output", folder / "o"],
)
bad_input(
    "run: suite path is a folder",
    "",
    "suite",
    lambda sweep, folder: ["run", folder, "--output", folder / "o"],
)
bad_input(
    "run: a path holding `[/` and `[bold]`",
    "tests/unit/cli/test_plain_messages.py::test_a_path_with_markup_closing_tag_is_printed_verbatim",
    "a[/]b[bold]",
    lambda sweep, folder: ["run", folder / "a[/]b[bold]" / "suite.toml", "--output", folder / "o"],
)


def suite_edit(
    name: str, tests: str, contains: str, edit: Callable[[str], str], *, extra: str = ""
) -> None:
    def build(sweep: Sweep, folder: Path) -> list[Any]:
        suite, _ = sweep.suite(folder, extra=extra)
        text = edit(suite.read_text())
        suite.write_text(text)
        return ["run", suite, "--output", folder / "o"]

    bad_input(f"suite: {name}", tests, contains, build)


def rep(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


WORKLOAD_2 = '\n[[workloads]]\nname = "second"\ndataset = "{}"\nconcurrency = [1]\nmax_tokens = 8\n'
DATASET_FIRST = f"{FAULTS_TEST}::test_every_workload_dataset_is_checked_before_any_server_starts"

for _name, _tests, _contains, _edit in [
    (
        "malformed TOML",
        f"{SUITE_BAD}::test_malformed_toml_gives_file_and_line",
        "malformed TOML",
        rep("[servers.eagle3]", "[servers.eagle3"),
    ),
    (
        "unknown top-level key",
        f"{SUITE_BAD}::test_unknown_keys_at_each_level",
        "colour: unknown key",
        lambda t: "colour = 1\n" + t,
    ),
    (
        "unknown key in [target]",
        f"{SUITE_BAD}::test_unknown_keys_at_each_level",
        "target.baseline",
        rep('engine = "emulator"', 'engine = "emulator"\nbaseline = true'),
    ),
    (
        "unknown key in a workload",
        f"{SUITE_BAD}::test_unknown_keys_at_each_level",
        "max_token: unknown key",
        rep("max_tokens = 16", "max_token = 16"),
    ),
    (
        "unknown key in a speculative table",
        f"{SUITE_BAD}::test_unknown_key_names_file_path_and_allowed_keys",
        "num_spec_tokens",
        rep("num_speculative_tokens", "num_spec_tokens"),
    ),
    (
        "wrong type: concurrency a string",
        "",
        "concurrency",
        rep("concurrency = [1, 4]", 'concurrency = "4"'),
    ),
    (
        "wrong type: max_tokens a string",
        "",
        "max_tokens",
        rep("max_tokens = 16", 'max_tokens = "lots"'),
    ),
    ("wrong type: repeats a float", "", "repeats", rep("repeats = 1", "repeats = 1.5")),
    (
        "wrong type: max_tokens a numeric string",
        f"{SUITE_BAD}::test_a_value_of_the_wrong_type_is_refused_not_coerced",
        "max_tokens",
        rep("max_tokens = 16", 'max_tokens = "16"'),
    ),
    (
        "wrong type: baseline a string",
        f"{SUITE_BAD}::test_a_value_of_the_wrong_type_is_refused_not_coerced",
        "baseline",
        rep("baseline = true", 'baseline = "yes"'),
    ),
    (
        "duplicate server names (bracketed text kept)",
        f"{SUITE_BAD}::test_duplicate_server_names",
        "each [servers.<name>] must be unique",
        lambda t: t + "\n[servers.baseline]\nbaseline = false\n",
    ),
    (
        "no baseline",
        f"{SUITE_BAD}::test_no_baseline_two_baselines_empty_matrix",
        "no server has baseline = true",
        rep("baseline = true", "baseline = false"),
    ),
    (
        "two baselines",
        f"{SUITE_BAD}::test_no_baseline_two_baselines_empty_matrix",
        "exactly one server",
        rep("[servers.eagle3]", "[servers.eagle3]\nbaseline = true"),
    ),
    (
        "no workloads (bracketed text kept)",
        "tests/unit/cli/test_plain_messages.py::test_bracketed_text_in_an_error_is_kept",
        "add at least one [[workloads]] table",
        lambda t: t.split("[[workloads]]")[0],
    ),
    (
        "empty concurrency list",
        f"{SUITE_BAD}::test_no_baseline_two_baselines_empty_matrix",
        "concurrency",
        rep("concurrency = [1, 4]", "concurrency = []"),
    ),
    (
        "empty [target] table",
        "",
        "model",
        lambda t: t.replace('engine = "emulator"\nmodel', 'engine = "emulator"\nxmodel').replace(
            "xmodel = ", "# "
        ),
    ),
    (
        "unknown speculative method",
        f"{SUITE_BAD}::test_unknown_speculative_method_lists_allowed",
        "'medusa' is not allowed",
        rep('"eagle3"', '"medusa"'),
    ),
    (
        "server name with a space",
        f"{SUITE_BAD}::test_missing_file_and_bad_server_name",
        "servers.spec x",
        rep("[servers.eagle3]", '[servers."spec x"]'),
    ),
    (
        "tensor_parallel_size = 0",
        f"{SUITE_BAD}::test_value_inherited_from_target_is_blamed_on_target",
        "tensor_parallel_size",
        rep('engine = "emulator"', 'engine = "emulator"\ntensor_parallel_size = 0'),
    ),
    (
        "--tensor-parallel-size in extra_args",
        "tests/unit/launch/test_parallelism.py::test_parallel_sizes_in_extra_args_are_refused_in_one_line",
        "tensor-parallel-size",
        rep(
            'engine = "emulator"',
            'engine = "emulator"\nextra_args = ["--tensor-parallel-size", "2"]',
        ),
    ),
    (
        "an emulator table on a vLLM server",
        "",
        "emulator",
        rep('engine = "emulator"', 'engine = "vllm"'),
    ),
    ("concurrency 0", RANGE, "concurrency", rep("concurrency = [1, 4]", "concurrency = [0]")),
    ("concurrency -1", RANGE, "concurrency", rep("concurrency = [1, 4]", "concurrency = [-1]")),
    (
        "concurrency 2^64",
        RANGE,
        "concurrency",
        rep("concurrency = [1, 4]", "concurrency = [18446744073709551616]"),
    ),
    ("temperature nan", RANGE, "temperature", rep("warmup = 1", "warmup = 1\ntemperature = nan")),
    ("temperature inf", RANGE, "temperature", rep("warmup = 1", "warmup = 1\ntemperature = inf")),
    ("temperature -1", RANGE, "temperature", rep("warmup = 1", "warmup = 1\ntemperature = -1.0")),
    (
        "request_timeout_s = 0",
        RANGE,
        "request_timeout_s",
        rep("warmup = 1", "warmup = 1\nrequest_timeout_s = 0"),
    ),
    (
        "max_tokens above max_model_len",
        RANGE,
        "max_model_len",
        rep("warmup = 1", "warmup = 1\nmax_model_len = 16"),
    ),
    (
        "precision = 0",
        "tests/e2e/test_precision_emulator.py",
        "precision",
        rep("warmup = 1", "warmup = 1\nprecision = 0.0"),
    ),
    (
        "precision = 1",
        "tests/e2e/test_precision_emulator.py",
        "precision",
        rep("warmup = 1", "warmup = 1\nprecision = 1.0"),
    ),
    (
        "precision = 2",
        "tests/e2e/test_precision_emulator.py",
        "precision",
        rep("warmup = 1", "warmup = 1\nprecision = 2.0"),
    ),
    (
        "min_conversations above the dataset",
        "",
        "min_conversations",
        rep("warmup = 1", "warmup = 1\nprecision = 0.05\nmin_conversations = 500"),
    ),
    (
        "workloads that share cells",
        "",
        "workload",
        lambda t: t + t[t.index("[[workloads]]") :].replace("[1, 4]", "[2]"),
    ),
    (
        "a second workload's dataset missing",
        DATASET_FIRST,
        "file not found",
        lambda t: t + WORKLOAD_2.format("/nonexistent/nosuch.jsonl"),
    ),
    (
        "a second workload's dataset has placeholder rows",
        DATASET_FIRST,
        "placeholder",
        lambda t: t + WORKLOAD_2.format(f"speed-bench:qualitative:{PLACEHOLDERS}"),
    ),
    (
        "unknown category",
        DATASET_FIRST,
        "nosuch",
        rep("max_tokens = 16", 'max_tokens = 16\ncategories = ["nosuch"]'),
    ),
]:
    suite_edit(_name, _tests, _contains, _edit)


def suite_bad_line(sweep: Sweep, folder: Path) -> list[Any]:
    bad = write_file(folder, "bad.jsonl", '{"category": "chat", "turns": ["hi"]}\n{bad json\n')
    suite, _ = sweep.suite(folder, extra=WORKLOAD_2.format(bad))
    return ["run", suite, "--output", folder / "o"]


bad_input(
    "suite: a second workload's dataset has a bad JSONL line",
    DATASET_FIRST,
    "bad.jsonl:2",
    suite_bad_line,
)

# Readers: wrong folders and options.
LOSSLESS_BAD = (
    "tests/unit/lossless/test_lossless_recorded_run.py::test_bad_input_is_one_line_and_exit_2"
)
for _name, _tests, _contains, _build in [
    ("report on a missing folder", "", "nosuch", lambda s, f: ["report", f / "nosuch"]),
    (
        "report on a folder with no results",
        "",
        "empty",
        lambda s, f: ["report", mkdir(f / "empty")],
    ),
    ("report on a file", "", "a-file", lambda s, f: ["report", write_file(f, "a-file", "x")]),
    (
        "report on a folder with a manifest.json and no cells",
        "",
        "only-manifest",
        lambda s, f: ["report", only_manifest(f / "only-manifest"), "--out", f / "r"],
    ),
    (
        "report --format unknown",
        "",
        "--format",
        lambda s, f: ["report", RECORDED_RUN, "--format", "docx", "--out", f / "r"],
    ),
    (
        "report --al-definition unknown",
        "",
        "--al-definition",
        lambda s, f: ["report", RECORDED_RUN, "--al-definition", "mean", "--out", f / "r"],
    ),
    (
        "report --baseline unknown label",
        "",
        "nosuch",
        lambda s, f: ["report", RECORDED_RUN, "--baseline", "nosuch", "--out", f / "r"],
    ),
    (
        "report: two results folders without --out",
        "",
        "--out",
        lambda s, f: ["report", RECORDED_RUN, s.complete_campaign() / "results"],
    ),
    (
        "gate on a missing folder",
        "",
        "nosuch",
        lambda s, f: ["gate", f / "nosuch", "--baseline", s.baseline()],
    ),
    (
        "gate on a folder with no results",
        "",
        "empty",
        lambda s, f: ["gate", mkdir(f / "empty"), "--baseline", s.baseline()],
    ),
    (
        "gate --baseline missing",
        "",
        "nosuch.json",
        lambda s, f: ["gate", RECORDED_RUN, "--baseline", f / "nosuch.json"],
    ),
    (
        "gate --baseline not a baseline (a summary.json)",
        "",
        "summary.json",
        lambda s, f: [
            "gate",
            RECORDED_RUN,
            "--baseline",
            RECORDED_RUN / RECORDED_CELL / "summary.json",
        ],
    ),
    (
        "gate --baseline binary",
        "",
        "b.json",
        lambda s, f: [
            "gate",
            RECORDED_RUN,
            "--baseline",
            write_bytes(f / "b.json", CORRUPT["binary"]),
        ],
    ),
    (
        "gate --rules malformed TOML",
        "tests/unit/gate/test_gate_rules.py",
        "rules.toml",
        lambda s, f: [
            "gate",
            RECORDED_RUN,
            "--baseline",
            s.baseline(),
            "--rules",
            write_file(f, "rules.toml", "[metrics\n"),
        ],
    ),
    (
        "gate --rules unknown metric",
        "tests/unit/gate/test_gate_rules.py",
        "nosuch_metric",
        lambda s, f: [
            "gate",
            RECORDED_RUN,
            "--baseline",
            s.baseline(),
            "--rules",
            write_file(f, "rules.toml", "[metrics.nosuch_metric]\nmax = 1\n"),
        ],
    ),
    (
        "lossless on a missing folder",
        LOSSLESS_BAD,
        "does not exist",
        lambda s, f: ["lossless", f / "nosuch"],
    ),
    (
        "lossless on a folder with no results",
        "",
        "empty",
        lambda s, f: ["lossless", mkdir(f / "empty")],
    ),
    (
        "lossless --min-match-rate 1.5",
        LOSSLESS_BAD,
        "--min-match-rate",
        lambda s, f: ["lossless", RECORDED_RUN, "--min-match-rate", "1.5", "--out", f],
    ),
    (
        "lossless --baseline unknown label",
        LOSSLESS_BAD,
        "nosuch",
        lambda s, f: ["lossless", RECORDED_RUN, "--baseline", "nosuch", "--out", f],
    ),
    (
        "baseline save on a missing folder",
        "",
        "nosuch",
        lambda s, f: ["baseline", "save", f / "nosuch", "--out", f / "b.json"],
    ),
    (
        "emulate --acceptance 1.5",
        "tests/unit/emulator/test_emulator_config.py",
        "--acceptance",
        lambda s, f: ["emulate", "--port", str(free_port()), "--acceptance", "1.5,0.5,0.5"],
    ),
    ("emulate --port 99999", "", "--port", lambda s, f: ["emulate", "--port", "99999"]),
    (
        "data inspect on a missing file",
        "",
        "nosuch.jsonl",
        lambda s, f: ["data", "inspect", str(f / "nosuch.jsonl")],
    ),
]:
    bad_input(_name, _tests, _contains, _build)


bad_input(
    "SPECBENCH_CONSOLE_WIDTH=abc",
    "tests/unit/cli/test_console.py::test_the_cli_refuses_a_bad_width_in_one_line_with_exit_2",
    "SPECBENCH_CONSOLE_WIDTH",
    lambda s, f: ["report", RECORDED_RUN, "--out", f / "r"],
    env={"SPECBENCH_CONSOLE_WIDTH": "abc"},
)


def only_manifest(path: Path) -> Path:
    path.mkdir()
    shutil.copy(RECORDED_RUN / "manifest.json", path / "manifest.json")
    return path


def mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# --- running the sweep --------------------------------------------------------------------


def run_case(sweep: Sweep, case: Case) -> Result:
    result = Result(case.id, case.kind, case.name, case.expected, case.tests)
    check = Check()
    started = time.monotonic()
    try:
        case.run(sweep, check)
    except Exception as error:  # noqa: BLE001 (a broken case is a failed case, with its reason)
        check.fail(f"the case itself crashed: {type(error).__name__}: {error}")
        if sweep.verbose:
            traceback.print_exc()
    result.seconds = round(time.monotonic() - started, 1)
    result.problems = check.problems
    result.data_loss = check.data_loss
    result.observed = check.observed
    if check.skipped is not None:
        result.status, result.observed = "skip", check.skipped
    elif check.problems:
        result.status = "fail"
    return result


def totals(results: list[Result]) -> dict[str, Any]:
    def count(kind: str) -> dict[str, int]:
        mine = [r for r in results if r.kind == kind]
        return {
            "passed": sum(r.status == "pass" for r in mine),
            "run": sum(r.status != "skip" for r in mine),
            "skipped": sum(r.status == "skip" for r in mine),
        }

    return {
        "faults": count("fault"),
        "inputs": count("input"),
        "data_loss_cases": sum(r.data_loss for r in results),
    }


def markdown(results: list[Result], summary: dict[str, Any]) -> str:
    rows = [
        "| # | case | expected | observed | result | test that injects it |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        observed = r.observed + (f" — {'; '.join(r.problems)}" if r.problems else "")
        verdict = r.status + (" (DATA LOSS)" if r.data_loss else "")
        cells = (r.id, r.name, r.expected, observed, verdict, r.tests or "—")
        rows.append("| " + " | ".join(c.replace("|", "/").replace("\n", " ") for c in cells) + " |")
    f, i = summary["faults"], summary["inputs"]
    rows += [
        "",
        f"Faults survived: {f['passed']}/{f['run']}"
        + (f" ({f['skipped']} skipped)" if f["skipped"] else ""),
        f"Bad inputs with a clean error: {i['passed']}/{i['run']}"
        + (f" ({i['skipped']} skipped)" if i["skipped"] else ""),
        f"Data-loss cases: {summary['data_loss_cases']}",
    ]
    return "\n".join(rows)


def select(only: str | None) -> list[Case]:
    if not only:
        return list(CASES)
    wanted = {x.strip() for x in only.split(",") if x.strip()}
    unknown = wanted - {c.id for c in CASES}
    if unknown:
        raise SystemExit(f"--only: unknown case ids {sorted(unknown)}")
    return [c for c in CASES if c.id in wanted]


def named(*names: str) -> list[Case]:
    """The cases of these names, in this order (ids shift as cases are added; names stay)."""
    index = {case.name: case for case in CASES}
    missing = [name for name in names if name not in index]
    if missing:
        raise KeyError(f"no such cases: {missing}")
    return [index[name] for name in names]


def sweep_cases(cases: list[Case], root: Path, verbose: bool = False) -> list[Result]:
    """Run `cases` in order in a scratch folder under `root`; the results, in order."""
    sweep = Sweep(root, verbose)
    needs_emulator = any(c.kind == "input" for c in cases)
    with contextlib.ExitStack() as stack:
        if needs_emulator:  # bench inputs refused against a live server; max_model_len 64
            sweep.emulator_url = stack.enter_context(
                running_emulator("--model", "m", "--max-model-len", "64")
            )
        results = []
        for case in cases:
            result = run_case(sweep, case)
            results.append(result)
            mark = {"pass": "ok", "fail": "FAIL", "skip": "skip"}[result.status]
            print(f"{case.id} {mark:4} {result.seconds:6.1f}s  {case.name}", file=sys.stderr)
            if result.problems:
                print(f"      {'; '.join(result.problems)}", file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated case ids (F01,I07,…)")
    parser.add_argument("--json", type=Path, default=Path("fault-sweep.json"), help="JSON output")
    parser.add_argument("--md", type=Path, help="also write the markdown table here")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each CLI run")
    args = parser.parse_args(argv)
    cases = select(args.only)
    if args.list:
        for case in cases:
            print(f"{case.id}  {case.name}  →  {case.expected}")
        return 0
    root = Path(tempfile.mkdtemp(prefix="fault-sweep-"))
    started = time.monotonic()
    try:
        results = sweep_cases(cases, root, args.verbose)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"scratch folder kept: {root}", file=sys.stderr)
    summary = totals(results)
    table = markdown(results, summary)
    print(table)
    elapsed = round(time.monotonic() - started, 1)
    document = {
        "format": "specbench.fault_sweep",
        "version": 1,
        "python": sys.version.split()[0],
        "seconds": elapsed,
        "totals": summary,
        "cases": [asdict(r) for r in results],
    }
    args.json.write_text(json.dumps(document, indent=2) + "\n")
    if args.md:
        args.md.write_text(table + "\n")
    print(f"\n{len(results)} cases in {elapsed} s; JSON in {args.json}", file=sys.stderr)
    failed = any(r.status == "fail" for r in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
