"""One `specbench` per test process, started once and forked for each `run_cli`.

A `specbench` subprocess spends about 1 CPU-s starting the interpreter and importing
(typer, pydantic, numpy, aiohttp, pandas, matplotlib, the package) before its command
runs, and `make test` runs some 400 of them on two cores. The zygote imports all of it
once; each `run_cli` it takes is a fork of it, a process of its own:

- its own pid, with the caller's stdin and two pipes for stdout and stderr (passed over a
  Unix socket), the caller's working directory and umask, the run's environment and argv (as
  `python -m specbench.cli.main` sets it), the signal dispositions a fresh interpreter
  has;
- it runs `specbench.cli.main.main` and ends as any Python process ends (SystemExit or a
  traceback, atexit handlers, non-daemon threads joined, buffers flushed);
- the zygote waits for it (a pidfd) and sends its exit status back as subprocess reports
  one: the code, or minus the signal that killed it.

What a fork cannot give is what a module read from the environment while the zygote
imported it: `run_cli` forks only a run whose environment is the one the zygote started
with (the session's, with the fixed console) and starts a subprocess for any other, and
`SPECBENCH_TEST_FORK=0` turns the zygote off (`make coverage` does: coverage follows
subprocesses from their interpreter start). The zygote ends when the process that started
it closes its stdin: when that process exits, or `stop()`.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import pkgutil
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

#: `SPECBENCH_TEST_FORK=0`: every `run_cli` starts a subprocess.
ENABLE_ENV = "SPECBENCH_TEST_FORK"
#: What `python -m specbench.cli.main` sets as argv[0].
MAIN_PATH = str(Path(__file__).resolve().parents[2] / "specbench" / "cli" / "main.py")
_TESTS = str(Path(__file__).resolve().parents[1])
_MAX_REQUEST = 1 << 20
#: Set by pytest for each test (nothing reads it at import): not part of the comparison.
_PER_TEST = "PYTEST_CURRENT_TEST"


def _preload() -> None:
    """Import every module of the package (each command imports its own inside its body)."""
    import specbench

    for module in pkgutil.walk_packages(specbench.__path__, "specbench."):
        __import__(module.name)


def serve(path: str) -> None:
    """The zygote: listen on `path`, fork a child per request. Returns only in a child,
    by the SystemExit (or exception) of its `main`."""
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    parent = sys.stdin.fileno()
    waiting: dict[int, tuple[int, socket.socket]] = {}  # pidfd: (pid, connection)
    while True:
        ready, _, _ = select.select([listener, parent, *waiting], [], [])
        for item in ready:
            if item == parent:  # the test process is gone, or stopped us
                os._exit(0)
            if item is listener:
                connection, _ = listener.accept()
                try:
                    request, fds = _receive(connection)
                except (OSError, ValueError):  # a caller gone before it asked (a timeout)
                    connection.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    for pidfd, (_, other) in waiting.items():
                        os.close(pidfd)
                        other.close()
                    connection.close()
                    _child(request, fds)
                for fd in fds:
                    os.close(fd)
                waiting[os.pidfd_open(pid)] = (pid, connection)
                connection.sendall(f"{pid}\n".encode())
                continue
            pid, connection = waiting.pop(item)
            os.close(item)
            _, status = os.waitpid(pid, 0)
            with contextlib.suppress(OSError):  # the caller gave up on it
                connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            connection.close()


def _receive(connection: socket.socket) -> tuple[dict[str, object], list[int]]:
    data, fds, _, _ = socket.recv_fds(connection, _MAX_REQUEST, 3)
    try:
        if len(fds) != 3:
            raise ValueError(f"a request with {len(fds)} file descriptors, not 3")
        return json.loads(data), list(fds)
    except ValueError:
        for fd in fds:
            os.close(fd)
        raise


def _child(request: Mapping[str, object], fds: Sequence[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(str(request["cwd"]))
    os.umask(int(str(request["umask"])))
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update(env)
    argv = request["argv"]
    assert isinstance(argv, list)
    sys.argv = [MAIN_PATH, *argv]
    sys.modules["__main__"].__package__ = "specbench.cli"  # click names `python -m …`
    from specbench.cli.main import main

    main()  # raises SystemExit: the interpreter ends this child as it would any process


class Zygote:
    """The client side: `run` forks a `specbench` from the zygote, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] | None = None
        self._socket = ""

    def usable(self, env: Mapping[str, str]) -> bool:
        """Whether a run in `env` can be a fork: forks allowed, and `env` the one the zygote
        started in (this process's when it first asked, whatever `env` that asked for)."""
        if os.environ.get(ENABLE_ENV, "1") == "0":
            return False
        with self._lock:
            if self._process is None:
                self._start(without_test_name(session_env()))
            return without_test_name(env) == self._env

    def _start(self, env: dict[str, str]) -> None:
        directory = tempfile.mkdtemp(prefix="specbench-zygote-")
        self._socket = os.path.join(directory, "socket")
        code = (
            f"import sys; sys.path.insert(0, {_TESTS!r}); "
            f"from harness.zygote import serve; serve({self._socket!r})"
        )
        self._process = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        assert self._process.stdout is not None
        if self._process.stdout.readline() != b"ready\n":
            self._process.kill()
            raise RuntimeError(f"the test zygote did not start (exit {self._process.wait()})")
        self._env = env
        atexit.register(self.stop)

    @property
    def socket_path(self) -> str:
        """Where the zygote listens (a Unix socket); empty before it starts."""
        return self._socket

    @property
    def pid(self) -> int | None:
        """The zygote's pid (its forks are its children); None before it starts."""
        return None if self._process is None else self._process.pid

    def stop(self) -> None:
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None
        process.stdin.close()  # its EOF ends the zygote
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        Path(self._socket).unlink(missing_ok=True)
        Path(self._socket).parent.rmdir()

    def run(
        self, argv: Sequence[str], env: Mapping[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """`specbench ARGV` forked, to completion; TimeoutExpired (the child killed) as
        subprocess.run raises it."""
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        umask = os.umask(0o022)
        os.umask(umask)
        request = json.dumps(
            {"argv": list(argv), "env": dict(env), "cwd": os.getcwd(), "umask": umask}
        )
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(self._socket)
            try:
                socket.send_fds(connection, [request.encode()], [0, out_write, err_write])
            finally:
                os.close(out_write)
                os.close(err_write)
            replies = connection.makefile("r")
            pid = int(replies.readline())
            outputs = _Outputs(out_read, err_read)
            finished = outputs.wait(timeout)
            if not finished:
                os.kill(pid, signal.SIGKILL)
                outputs.wait(None)
            code = int(replies.readline())
        stdout, stderr = outputs.text()
        cmd = [sys.executable, "-m", "specbench.cli.main", *argv]
        if not finished:
            raise subprocess.TimeoutExpired(cmd, timeout, output=stdout, stderr=stderr)
        return subprocess.CompletedProcess(cmd, code, stdout, stderr)


def session_env() -> dict[str, str]:
    """The environment a zygote starts in: the test process's, with the fixed console."""
    from harness.cli import cli_env

    return cli_env()


def without_test_name(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without PYTEST_CURRENT_TEST, which changes with every test: the environment
    that stays the same across a test process (the zygote's; the vLLM pool's servers')."""
    return {name: value for name, value in env.items() if name != _PER_TEST}


class _Outputs:
    """stdout and stderr of a child, each read to its end by a thread of its own."""

    def __init__(self, *fds: int) -> None:
        self._chunks: list[list[bytes]] = [[] for _ in fds]
        self._threads = [
            threading.Thread(target=self._read, args=(fd, chunks), daemon=True)
            for fd, chunks in zip(fds, self._chunks, strict=True)
        ]
        for thread in self._threads:
            thread.start()

    @staticmethod
    def _read(fd: int, chunks: list[bytes]) -> None:
        with os.fdopen(fd, "rb") as stream:
            while chunk := stream.read1(65536):
                chunks.append(chunk)

    def wait(self, timeout: float | None) -> bool:
        """Whether both reached their end (the child and anything holding its pipes ended)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self._threads)

    def text(self) -> tuple[str, str]:
        """Both as subprocess.run(text=True) gives them: the locale's encoding, strict,
        universal newlines."""
        encoding = locale.getpreferredencoding(False)
        out, err = (
            b"".join(chunks).decode(encoding).replace("\r\n", "\n").replace("\r", "\n")
            for chunks in self._chunks
        )
        return out, err


#: The test process's zygote.
ZYGOTE = Zygote()
