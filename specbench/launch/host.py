"""The machine side of a launch: the vllm executable, free ports, process-group liveness."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Mapping
from pathlib import Path

from specbench.common.errors import SpecbenchError


def find_vllm_executable(explicit: str | Path | None, env: Mapping[str, str]) -> str:
    """`--vllm-bin`, else `$SPECBENCH_VLLM`, else `vllm` on PATH, as an absolute path."""
    for value, origin in ((explicit, "--vllm-bin"), (env.get("SPECBENCH_VLLM"), "SPECBENCH_VLLM")):
        if value is None or str(value) == "":
            continue
        text = str(value)
        found = shutil.which(text, path=env.get("PATH")) if os.sep not in text else None
        path = Path(found or text).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise SpecbenchError(f"vllm executable {text!r} (from {origin}) is not an executable")
        return str(path.absolute())
    found = shutil.which("vllm", path=env.get("PATH"))
    if found is None:
        raise SpecbenchError(
            "no vllm executable: pass --vllm-bin PATH, set SPECBENCH_VLLM, or put vllm on PATH"
        )
    return str(Path(found).absolute())


def free_port(host: str) -> int:
    """A port the OS reports free on `host` right now."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def check_port_free(host: str, port: int) -> None:
    """Raise SpecbenchError if something already listens on host:port."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise SpecbenchError(
                f"port {port} on {host} is in use ({error.strerror}): choose another --port"
            ) from None


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def client_host(host: str) -> str:
    """The address a client on this machine connects to for a server bound to `host`."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is left in process group `pgid`."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command: state, ppid, pgrp, ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False
