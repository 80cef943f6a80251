"""The writer's lock on a results directory: one campaign measures into it at a time.

An advisory `flock` on `DIR/.specbench.lock`, held for the whole run and released by the
kernel on any exit (even kill -9), so a dead writer never leaves a stale lock. The file
holds the holder's pid, host, start time and command line, for the refusal message of the
next writer. The shard jobs of one Slurm campaign measure disjoint cells into one shared
directory: they take the lock shared, which still keeps out any other (exclusive) writer.
Their submitter (`run --executor slurm`) takes it shared too, so its jobs can start while it
submits and watches, and holds `DIR/.specbench.submit.lock` exclusively: one submitter
at a time, never two submitting the same shard.
"""

from __future__ import annotations

import fcntl
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from specbench.common.errors import SpecbenchError

LOCK_FILE = ".specbench.lock"
SUBMIT_LOCK_FILE = ".specbench.submit.lock"


def describe_holder(path: Path) -> str:
    """'pid P on host H since T (ARGV)' from the lock file, or what is known of it."""
    try:
        holder = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return "holder unknown"
    if not isinstance(holder, dict):
        return "holder unknown"
    argv = " ".join(str(a) for a in holder.get("argv") or [])
    return (
        f"pid {holder.get('pid')} on host {holder.get('host')} since {holder.get('started_at')}"
        + (f": {argv}" if argv else "")
    )


@contextmanager
def results_lock(root: Path, started_at: str, *, shared: bool = False) -> Iterator[None]:
    """Hold the writer's lock of `root` for the block; refuse (exit 2) if another holds it."""
    with _hold(root, LOCK_FILE, started_at, shared=shared):
        yield


@contextmanager
def submitter_lock(root: Path, started_at: str) -> Iterator[None]:
    """A Slurm submitter's hold on `root`: alone among submitters, beside its own jobs.

    Exclusive on the submitter's lock (a second submitter is refused), shared on the
    writer's lock (a local `run` is refused; the campaign's jobs, also shared, are not).
    """
    with (
        _hold(root, SUBMIT_LOCK_FILE, started_at, shared=False),
        _hold(root, LOCK_FILE, started_at, shared=True),
    ):
        yield


@contextmanager
def _hold(root: Path, name: str, started_at: str, *, shared: bool) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    path = root / name
    handle = path.open("a+b")
    try:
        try:
            fcntl.flock(handle, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SpecbenchError(
                f"{root}: another specbench is writing here ({describe_holder(path)}); "
                "wait for it to finish, stop it, or use another --output"
            ) from None
        except OSError as error:  # ENOSYS, ENOLCK: a filesystem without flock
            raise SpecbenchError(
                f"{path}: the filesystem refuses flock ({error.strerror}); specbench needs "
                "working locks there (Lustre: mount -o flock; NFS: no nolock), see docs/slurm.md"
            ) from None
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": started_at,
            "argv": sys.argv,
        }
        handle.seek(0)
        handle.truncate()
        handle.write(orjson.dumps(holder) + b"\n")
        handle.flush()
        yield
    finally:
        handle.close()  # releases the lock
