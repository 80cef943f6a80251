"""A real full disk: a small tmpfs (needs root) and a file that fills it."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def small_disk(path: Path, size: str) -> Iterator[Path | None]:
    """A tmpfs of `size` mounted at `path` for the block; None when it cannot be mounted."""
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        yield None
        return
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(disk: Path) -> Path:
    """Write until the disk is full; the filler file, to free it again."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:
            handle.write(b"\0" * 4096)
    return filler
