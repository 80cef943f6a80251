"""The test zygote (tests/harness/zygote.py): a forked `specbench` reads, prints and exits
as the subprocess it stands for."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import REPO, campaign_timings, suite_toml, workload
from harness.cli import CLI, cli_env
from harness.zygote import ENABLE_ENV, Zygote


def subprocess_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=cli_env(), check=False, timeout=120
    )


def serve_forever() -> list[str]:
    """`specbench emulate` on a free port: it serves until it is stopped."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return ["emulate", "--model", "emu-zygote", "--port", str(port)]


@pytest.fixture
def zygote(monkeypatch: pytest.MonkeyPatch) -> Iterator[Zygote]:
    """A zygote of the test's own, started in this environment (the session's one may
    have started while another test had changed it)."""
    monkeypatch.delenv(ENABLE_ENV, raising=False)
    own = Zygote()
    assert own.usable(cli_env())
    yield own
    own.stop()
    assert own.pid is None


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("run",),  # a usage error: exit 2, click names the program
        ("status", "/nonexistent/results"),  # the product's own one-line error
        ("run", "--help"),
    ],
)
def test_a_fork_prints_and_exits_as_the_subprocess_does(
    zygote: Zygote, args: tuple[str, ...]
) -> None:
    forked = zygote.run(list(args), cli_env(), timeout=120)
    real = subprocess_cli(*args)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )


def test_a_fork_runs_in_the_callers_directory_and_umask(
    zygote: Zygote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with a relative --output writes under the caller's working directory, its
    files with the caller's umask (0600 under 077; the session's is 022)."""
    suite = tmp_path / "suite.toml"
    dataset = f"speed-bench:qualitative:{REPO / 'tests' / 'fixtures' / 'speed_bench'}"
    suite.write_text(
        suite_toml(
            name="zygote",
            model="emu-zygote",
            timings=campaign_timings(),
            workloads=workload(dataset, (4,), 4),
        )
    )
    monkeypatch.chdir(tmp_path)
    previous = os.umask(0o077)
    try:
        done = zygote.run(["run", "suite.toml", "--output", "relative"], cli_env(), 300)
    finally:
        os.umask(previous)
    assert done.returncode == 0, done.stderr
    summaries = sorted((tmp_path / "relative").rglob("summary.json"))
    assert len(summaries) == 2  # the baseline's cell and the eagle3 one
    assert {stat.S_IMODE(path.stat().st_mode) for path in summaries} == {0o600}


def test_another_environment_is_a_subprocess(
    zygote: Zygote, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not zygote.usable({**cli_env(), "SPECBENCH_ZYGOTE_PROBE": "1"})
    assert zygote.usable({**cli_env(), "PYTEST_CURRENT_TEST": "another test"})
    monkeypatch.setenv(ENABLE_ENV, "0")
    assert not zygote.usable(cli_env())


def test_a_timeout_kills_the_fork_and_raises_as_subprocess_does(zygote: Zygote) -> None:
    """`specbench emulate` serves until stopped: the timeout kills it."""
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        zygote.run(serve_forever(), cli_env(), timeout=3)
    assert time.monotonic() - started < 60
    assert caught.value.timeout == 3


def test_a_fork_killed_by_a_signal_reports_minus_the_signal(zygote: Zygote) -> None:
    """The exit status a subprocess would report: -SIGKILL for a server killed."""
    done: list[subprocess.CompletedProcess[str]] = []
    runner = threading.Thread(
        target=lambda: done.append(zygote.run(serve_forever(), cli_env(), 60))
    )
    runner.start()
    children = Path(f"/proc/{zygote.pid}/task/{zygote.pid}/children")
    deadline = time.monotonic() + 30
    while not (forks := children.read_text().split()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(forks) == 1, forks
    os.kill(int(forks[0]), signal.SIGKILL)
    runner.join(30)
    assert done and done[0].returncode == -signal.SIGKILL


def test_a_caller_gone_before_its_request_leaves_the_zygote_serving(zygote: Zygote) -> None:
    """A test interrupted (a timeout) between connecting and asking: the next run works."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.connect(zygote.socket_path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as garbled:
        garbled.connect(zygote.socket_path)
        garbled.sendall(b"not a request")
    done = zygote.run(["--version"], cli_env(), timeout=120)
    assert (done.returncode, done.stdout.startswith("specbench ")) == (0, True)
