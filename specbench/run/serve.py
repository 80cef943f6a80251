"""`specbench serve`: start one server config of a suite and keep it up until interrupted."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.launch.process import DEFAULT_READY_TIMEOUT_S, ServerProcess
from specbench.launch.provenance import ServerProvenance
from specbench.suite.load import load_suite

_WATCH_INTERVAL_S = 0.5


def serve_suite_config(
    suite_path: Path,
    config_name: str,
    *,
    on_ready: Callable[[ServerProvenance], None],
    overrides: Iterable[str] = (),
    vllm_bin: str | Path | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    log_dir: Path = Path("results/serve"),
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S,
    gpus_unchecked: bool = False,
) -> None:
    """Start `config_name`, call `on_ready`, then block until Ctrl-C/SIGTERM or the server dies.

    The server is torn down on every way out; a server that dies raises ServerError.
    """
    suite = load_suite(suite_path, overrides)
    if config_name not in suite.servers:
        raise SpecbenchError(
            f"{suite_path}: no server config {config_name!r}; allowed: {', '.join(suite.servers)}"
        )
    server = ServerProcess(
        suite.servers[config_name],
        name=config_name,
        log_dir=log_dir,
        vllm_bin=vllm_bin,
        host=host,
        port=port,
        ready_timeout_s=ready_timeout_s,
        gpus_unchecked=gpus_unchecked,
    )
    with server:
        assert server.provenance is not None
        on_ready(server.provenance)
        while True:
            server.check_alive()
            time.sleep(_WATCH_INTERVAL_S)
