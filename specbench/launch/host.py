"""The machine side of a launch: the vllm executable, free ports, process-group liveness,
a server's identity across pid reuse, and its parent-death signal."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
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


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()


def boot_id() -> str | None:
    """This boot's id: a pid and its start time identify a process only within one boot."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def process_identity(pid: int) -> dict[str, object] | None:
    """What identifies a running process across pid reuse: host, boot, pid, start time.

    `start_ticks` is field 22 of /proc/PID/stat (clock ticks after boot). None off Linux.
    """
    fields = _proc_stat(pid)
    if fields is None or len(fields) < 20:
        return None
    return {
        "pid": pid,
        "host": socket.gethostname(),
        "boot_id": boot_id(),
        "start_ticks": int(fields[19]),
    }


def left_running(identity: dict[str, object]) -> bool:
    """Whether the process group that `identity`'s leader started still runs here.

    The leader alive with the same start time, or the leader gone but its group not (a
    group id is not reused while the group has members).
    """
    pid = identity.get("pid")
    if not isinstance(pid, int) or identity.get("host") != socket.gethostname():
        return False
    if identity.get("boot_id") != boot_id() or not group_alive(pid):
        return False
    fields = _proc_stat(pid)
    if fields is None or fields[0] == "Z" or int(fields[2]) != pid:
        return True  # the leader is gone (or a zombie): what is left is its group
    return int(fields[19]) == identity.get("start_ticks")


def stop_group(pgid: int, grace_s: float = 10.0) -> bool:
    """SIGTERM process group `pgid`, SIGKILL it after `grace_s`; True once it is gone."""
    for signum, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)
        deadline = time.monotonic() + wait_s
        while group_alive(pgid):
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        else:
            return True
    return not group_alive(pgid)


def die_with_parent(parent_pid: int) -> None:
    """In a child before exec: SIGTERM it when the process that started it dies (Linux).

    Set on a server's process-group leader, so a campaign killed outright (kill -9) does not
    leave its servers serving; vLLM stops its engine workers on that SIGTERM.
    """
    if _PRCTL is None:
        return
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent_pid:  # it died before prctl: nobody will send the signal
        os.kill(os.getpid(), signal.SIGTERM)


def _load_prctl() -> Callable[..., int] | None:
    """libc's prctl, resolved in the parent: the child between fork and exec only calls it
    (no import, no symbol lookup that could wait on a lock another thread held at fork)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


_PR_SET_PDEATHSIG = 1
_PRCTL = _load_prctl()
