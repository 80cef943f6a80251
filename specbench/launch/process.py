"""Start a server config as a process group, wait until it serves, always tear it down.

`ServerProcess` is a context manager: the server is stopped when the `with` block ends,
whether by return, exception or a stop signal (`specbench.common.interrupt` turns SIGINT
and SIGTERM into `Interrupted`, which unwinds the block), and also when the server dies
during start-up. Teardown sends SIGTERM to the whole process group (vLLM forks engine
workers), waits a grace period, then SIGKILLs what is left. The group's leader carries a
parent-death signal (Linux `PR_SET_PDEATHSIG`, SIGTERM): if specbench is killed outright
(kill -9), the server still stops.
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
from specbench.common.errors import ServerError, SpecbenchError
from specbench.launch.argv import build_argv, build_env, render_command
from specbench.launch.capabilities import PER_REQUEST_METRICS_FLAG, supports_flag
from specbench.launch.config import ServerConfig
from specbench.launch.health import server_version, wait_ready
from specbench.launch.host import (
    check_port_free,
    client_host,
    die_with_parent,
    find_vllm_executable,
    free_port,
    group_alive,
)
from specbench.launch.provenance import (
    ServerProvenance,
    available_gpus,
    gpu_inventory,
    recorded_env,
    redact_argv,
    redact_value,
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
        on_spawn: Callable[[int], None] | None = None,
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
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._process: subprocess.Popen[bytes] | None = None
        #: Called with the pid right after spawn, before readiness (to record it at once).
        self._on_spawn = on_spawn
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
        config = self.config
        env = build_env(config, self._base_env)
        inventory = gpu_inventory() if config.engine == "vllm" else None
        executable = "vllm"
        if config.engine == "vllm":
            executable = find_vllm_executable(self._vllm_bin, env)
            visible = available_gpus(env, inventory)
            if visible is not None and config.gpus > visible:
                raise SpecbenchError(
                    f"server {self.name!r} needs TP × PP × DP = {config.tensor_parallel_size} × "
                    f"{config.pipeline_parallel_size} × {config.data_parallel_size} = "
                    f"{config.gpus} GPUs, only {visible} visible"
                )
            if config.is_speculative and config.per_request_spec_decode_metrics:
                known = supports_flag(executable, PER_REQUEST_METRICS_FLAG, env)
                if known is False:
                    # An older vLLM refuses to start with the flag: leave it out, say so.
                    self.notes.append(
                        f"{executable} has no --{PER_REQUEST_METRICS_FLAG}: started without it "
                        "(per-category AL falls back to tokens per chunk, an estimate)"
                    )
                    config = config.model_copy(update={"per_request_spec_decode_metrics": False})
        if self._requested_port is None:
            self.port = free_port(self.host)
        else:
            check_port_free(self.host, self._requested_port)
            self.port = self._requested_port
        self.argv = build_argv(config, vllm_executable=executable, host=self.host, port=self.port)
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        shown_env = {key: redact_value(key, value) for key, value in config.env.items()}
        command = render_command(redact_argv(self.argv), shown_env)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"# specbench {started_at} {self.name}: {command}\n".encode())
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
        if self._on_spawn is not None:
            self._on_spawn(self._process.pid)
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
            env=recorded_env(env),
            gpu_inventory=inventory,
            gpus_used=config.gpus,
            base_url=self.base_url,
            served_model_name=config.api_model_name,
            config=config,
            log_path=str(self.log_path),
            started_at_utc=started_at,
            startup_s=round(startup_s, 3),
        )
        return self.provenance

    def check_alive(self) -> None:
        """Raise ServerError if the server process has exited."""
        if self._process is None:
            raise ServerError(f"server {self.name!r} has not been started")
        code = self._process.poll()
        if code is not None:
            raise ServerError(f"server {self.name!r} exited with code {code}; see {self.log_path}")

    def stop(self) -> None:
        """SIGTERM the process group, wait `stop_grace_s`, then SIGKILL; idempotent."""
        process = self._process
        if process is None:
            return
        # A Ctrl-C or SIGTERM during teardown must not abandon a half-stopped server, nor be
        # lost: it is held until the group is gone, then delivered to the restored handler.
        masked, pending = self._defer_signals()
        try:
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
