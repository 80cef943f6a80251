"""Start a server config as a process group, wait until it serves, always tear it down.

`ServerProcess` is a context manager: the server is stopped when the `with` block ends,
whether by return, exception or a stop signal (`specbench.common.interrupt` turns SIGINT
and SIGTERM into `Interrupted`, which unwinds the block), and also when the server dies
during start-up. Teardown sends SIGTERM to the whole process group (vLLM forks engine
workers), waits a grace period, then SIGKILLs what is left. The group's leader carries a
parent-death signal (Linux `PR_SET_PDEATHSIG`, SIGTERM): if specbench is killed outright
(kill -9), the server still stops.

A server started through a container launcher (`launch.container`) is stopped by name
first (`docker stop -t GRACE NAME`: the container is the daemon's, not in the group), then
its client's group as above.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from specbench.common.defaults import READY_TIMEOUT_S
from specbench.common.errors import ServerError
from specbench.launch.command import launch_command
from specbench.launch.config import ServerConfig
from specbench.launch.container import ContainerStart, stop_container
from specbench.launch.health import server_version, wait_ready
from specbench.launch.host import (
    check_port_free,
    client_host,
    die_with_parent,
    free_port,
    group_alive,
)
from specbench.launch.provenance import (
    ServerProvenance,
    recorded_env,
    redact_argv,
)

DEFAULT_READY_TIMEOUT_S = READY_TIMEOUT_S
DEFAULT_STOP_GRACE_S = 30.0
_KILL_WAIT_S = 10.0

SignalHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class ServerProcess:
    """One running server config; use as `with ServerProcess(...) as server:`."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        name: str,
        log_dir: Path,
        vllm_bin: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S,
        stop_grace_s: float = DEFAULT_STOP_GRACE_S,
        base_env: Mapping[str, str] | None = None,
        on_spawn: Callable[[int, ContainerStart | None], None] | None = None,
        gpus_unchecked: bool = False,
    ) -> None:
        self.config = config
        #: What was changed from the config at start, and why (e.g. a flag left out).
        self.notes: list[str] = []
        self.name = name
        self.log_path = Path(log_dir) / f"server-{name}.log"
        self.host = host
        self.ready_timeout_s = ready_timeout_s
        self.stop_grace_s = stop_grace_s
        self._requested_port = port
        self._vllm_bin = vllm_bin
        self._gpus_unchecked = gpus_unchecked
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._process: subprocess.Popen[bytes] | None = None
        #: Called with the pid (and the container, if any) right after spawn, before
        #: readiness (to record it at once).
        self._on_spawn = on_spawn
        #: The container the server runs in (a `launcher`), once resolved.
        self.container: ContainerStart | None = None
        self._unstopped_container: ContainerStart | None = None
        self.port: int | None = None
        self.argv: list[str] = []
        self.provenance: ServerProvenance | None = None

    @property
    def base_url(self) -> str:
        """`http://host:port` to send requests to."""
        if self.port is None:
            raise ServerError(f"server {self.name!r} has not been started")
        return f"http://{client_host(self.host)}:{self.port}"

    @property
    def pid(self) -> int | None:
        """PID of the server (also its process group id), once spawned."""
        return self._process.pid if self._process is not None else None

    def __enter__(self) -> ServerProcess:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> ServerProvenance:
        """Spawn the server and block until it serves the model; returns its provenance."""
        if self._process is not None:
            raise ServerError(f"server {self.name!r} is already started")
        launch = launch_command(
            self.config,
            name=self.name,
            vllm_bin=self._vllm_bin,
            base_env=self._base_env,
            gpus_unchecked=self._gpus_unchecked,
        )
        self.notes.extend(launch.notes)
        if launch.gpus_unchecked and launch.gpu_check:
            self.notes.append(f"GPUs {launch.gpu_check}")
        self.container = self._unstopped_container = launch.container
        config = launch.config
        if self._requested_port is None:
            self.port = free_port(self.host)
        else:
            check_port_free(self.host, self._requested_port)
            self.port = self._requested_port
        self.argv = launch.argv_at(self.host, self.port)
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        command = launch.shown(self.argv)
        log_offset, start_ns = self._spawn(launch.env, f"{started_at} {self.name}: {command}")
        assert self._process is not None
        if self._on_spawn is not None:
            self._on_spawn(self._process.pid, self.container)
        wait_ready(
            self._process,
            base_url=self.base_url,
            model=config.api_model_name,
            timeout_s=self.ready_timeout_s,
            describe=f"{config.engine} server {self.name!r}",
            log_path=self.log_path,
            log_offset=log_offset,
        )
        startup_s = (time.perf_counter_ns() - start_ns) / 1e9
        self.provenance = ServerProvenance(
            server_name=self.name,
            engine=config.engine,
            vllm_version=server_version(self.base_url),
            argv=redact_argv(self.argv),
            command=command,
            env=recorded_env(launch.env),
            gpu_inventory=launch.inventory,
            gpu_check=launch.gpu_check,
            gpus_used=config.gpus,
            base_url=self.base_url,
            served_model_name=config.api_model_name,
            config=config,
            log_path=str(self.log_path),
            started_at_utc=started_at,
            startup_s=round(startup_s, 3),
            container=None if self.container is None else self.container.provenance(redact_argv),
        )
        return self.provenance

    def _spawn(self, env: dict[str, str], header: str) -> tuple[int, int]:
        """Start `self.argv` in its own session, output to its log: (log offset, start ns)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"# specbench {header}\n".encode())
            for note in self.notes:
                log.write(f"# specbench note: {note}\n".encode())
            log.flush()
            log_offset = log.tell()
            start_ns = time.perf_counter_ns()
            parent = os.getpid()
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                # The server dies with this process, even when it is killed outright.
                preexec_fn=lambda: die_with_parent(parent),
            )
        return log_offset, start_ns

    def check_alive(self) -> None:
        """Raise ServerError if the server process has exited."""
        if self._process is None:
            raise ServerError(f"server {self.name!r} has not been started")
        code = self._process.poll()
        if code is not None:
            raise ServerError(f"server {self.name!r} exited with code {code}; see {self.log_path}")

    def stop(self) -> None:
        """Stop the container by name (if any), then SIGTERM the process group, wait
        `stop_grace_s`, then SIGKILL; idempotent."""
        process = self._process
        if process is None:
            return
        # A Ctrl-C or SIGTERM during teardown must not abandon a half-stopped server, nor be
        # lost: it is held until the group is gone, then delivered to the restored handler.
        masked, pending = self._defer_signals()
        try:
            container, self._unstopped_container = self._unstopped_container, None
            if container is not None and container.name is not None:
                # Also when the client is gone: a container outlives its client.
                stop_container(container.launcher.executable, container.name, self.stop_grace_s)
            pgid = process.pid  # start_new_session: the leader's PID is the group id
            self._signal_group(pgid, signal.SIGTERM)
            if not self._wait_group_gone(process, pgid, self.stop_grace_s):
                self._signal_group(pgid, signal.SIGKILL)
                self._wait_group_gone(process, pgid, _KILL_WAIT_S)
            process.wait(timeout=_KILL_WAIT_S)
        finally:
            self._deliver_deferred(masked, pending)

    @staticmethod
    def _signal_group(pgid: int, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)

    @staticmethod
    def _wait_group_gone(process: subprocess.Popen[bytes], pgid: int, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while True:
            process.poll()  # reaps the leader so it does not linger as a zombie
            if not group_alive(pgid):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)

    @staticmethod
    def _defer_signals() -> tuple[dict[int, SignalHandler], list[int]]:
        pending: list[int] = []
        if threading.current_thread() is not threading.main_thread():
            return {}, pending

        def defer(signum: int, frame: FrameType | None) -> None:
            pending.append(signum)

        return {
            signum: signal.signal(signum, defer)
            for signum in _DEFERRED
            if signal.getsignal(signum) != signal.SIG_IGN  # an ignored signal stays ignored
        }, pending

    @staticmethod
    def _deliver_deferred(saved: dict[int, SignalHandler], pending: list[int]) -> None:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(pending):
            signal.raise_signal(signum)


_DEFERRED = (signal.SIGINT, signal.SIGTERM)
