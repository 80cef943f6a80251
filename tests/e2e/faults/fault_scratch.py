"""What a fault case works with: its data (`FaultCase`, one pytest parameter per case), its
scratch folder with the CLI (`Scratch`), and what it observed (`Observed`, the table's
column).

A case's id (F01…, I01…), name, expected behaviour and the test that injects the same fault
become properties of its JUnit XML testcase (tests/e2e/faults/conftest.py), from which
tools/faults_table.py writes docs/faults.md's table.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness import REPO, Outcome, pids_of, popen_cli, run_cli, write_campaign_suite

RECORDED_RUN = REPO / "tests" / "fixtures" / "runs" / "tiny-vllm-ngram"
RECORDED_CELL = Path("ngram") / "lossless-prompts" / "c1" / "r0"
PLACEHOLDERS = REPO / "tests" / "fixtures" / "speed_bench_placeholders" / "data"
FAULTS_TEST = "tests/e2e/test_faults_emulator.py"


@dataclass(frozen=True)
class FaultCase:
    """One row of the faults table: `kind` is "fault" (F…) or "input" (I…); `tests` names the
    test that injects the same fault or input ("" where none does)."""

    id: str
    kind: str
    name: str
    expected: str
    tests: str


def case(
    id: str, name: str, expected: str, tests: str, *values: object, server: bool = False
) -> Any:
    """A fault case as a pytest parameter `(FaultCase, *values)`, with its id; `server`: it
    starts an emulator or a server (marker `fault_server`, left out of `make test`)."""
    kind = {"F": "fault", "I": "input"}[id[0]]
    marks = [pytest.mark.fault_server] if server else []
    return pytest.param(FaultCase(id, kind, name, expected, tests), *values, id=id, marks=marks)


def bad_input(
    id: str,
    name: str,
    tests: str,
    contains: str,
    *values: object,
    server: bool = False,
) -> Any:
    """A bad-input case: `(FaultCase, contains, *values)`; refused with one line naming
    `contains`."""
    expected = f"exit 2, one line naming {contains!r}"
    return case(id, name, expected, tests, contains, *values, server=server)


def observed_text(outcome: Outcome, extra: str = "") -> str:
    """The table's `observed`: the exit code and stderr's last line (cut at 150 characters)."""
    last = outcome.last.replace("|", "/")
    if len(last) > 150:
        last = last[:147] + "..."
    return f"exit {outcome.code}; {last}" + (f"; {extra}" if extra else "")


class Observed:
    """What a case saw, as the table shows it; the last call wins."""

    def __init__(self) -> None:
        self.text = ""

    def __call__(self, outcome: Outcome, extra: str = "") -> None:
        self.text = observed_text(outcome, extra)


class Scratch:
    """One case's scratch folder and the `specbench` processes it starts (killed, with every
    process holding one of its tags, when the case ends), and the shared setups
    (tests/e2e/faults/conftest.py) it asks for, started when first asked for."""

    def __init__(self, root: Path, request: pytest.FixtureRequest) -> None:
        self.root = root
        self._request = request
        self._tags: list[str] = []
        self._processes: list[subprocess.Popen[str]] = []

    def dir(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True)
        return path

    def tag(self) -> str:
        """A unique word for a command line, by which the case's processes are found."""
        tag = uuid.uuid4().hex[:12]
        self._tags.append(tag)
        return tag

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
        self._tags.append(tag)
        return path, tag

    @staticmethod
    def cli(*args: str | Path, timeout: float = 300, env: dict[str, str] | None = None) -> Outcome:
        """`specbench ARGS` to completion; a timeout is an outcome with no exit code."""
        try:
            done = run_cli(*args, timeout=timeout, env={**os.environ, **(env or {})})
        except subprocess.TimeoutExpired as error:
            return Outcome(None, str(error.stdout or ""), f"timed out after {timeout} s")
        return Outcome(done.returncode, done.stdout, done.stderr)

    def popen(
        self, *args: str | Path, ignore_sigint: bool = False, **kwargs: Any
    ) -> subprocess.Popen[str]:
        """`specbench ARGS` in the background; SIGINT as a terminal gives it, or ignored as
        `specbench … &` from a script gives it."""
        disposition = signal.SIG_IGN if ignore_sigint else signal.SIG_DFL

        def sigint() -> None:
            signal.signal(signal.SIGINT, disposition)

        process = popen_cli(*args, preexec_fn=sigint, **kwargs)
        self._processes.append(process)
        return process

    @staticmethod
    def finish(process: subprocess.Popen[str], timeout: float = 180) -> Outcome:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            return Outcome(None, stdout, f"timed out after {timeout} s\n{stderr}")
        return Outcome(process.returncode, stdout, stderr)

    def rerun(self, suite: Path, out: Path, *extra: str) -> Outcome:
        """`run SUITE --output OUT` again, which must exit 0."""
        again = self.cli("run", suite, "--output", out, *extra)
        assert again.code == 0, f"the rerun exited {again.code}: {again.last}"
        return again

    def complete_campaign(self) -> Path:
        """The folder of the finished 4-cell campaign (suite.toml, results/): read only."""
        return Path(self._request.getfixturevalue("complete_campaign"))

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
        """A baseline saved from the recorded run."""
        return Path(self._request.getfixturevalue("recorded_baseline"))

    def emulator_url(self) -> str:
        """An emulator serving max_model_len 64, for `bench` inputs refused at a live server."""
        return str(self._request.getfixturevalue("short_context_emulator"))

    def close(self) -> None:
        """Kill what the case left running (a failed case stops at its first failed check)."""
        for process in self._processes:
            if process.poll() is None:
                process.kill()
            process.communicate()
        for tag in self._tags:
            for pid in pids_of(tag):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
