"""Atomic writes: a write that fails names the file it was writing, never a temporary name."""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

import pytest

from specbench.common.errors import describe_os_error
from specbench.store.files import write_atomic


def test_a_folder_refusing_the_temporary_file_is_named_by_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What `chattr +i` on the results folder does: creating any file in it fails.
    def refuse(*, dir: str, prefix: str, suffix: str) -> tuple[int, str]:
        raise PermissionError(errno.EPERM, "Operation not permitted", f"{dir}/{prefix}x{suffix}")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    target = tmp_path / "manifest.json"
    with pytest.raises(OSError) as caught:
        write_atomic(target, "{}")
    assert describe_os_error(caught.value) == (
        f"{target}: Operation not permitted; the file or folder may be immutable (chattr +i): "
        "choose another --output"
    )
    assert list(tmp_path.iterdir()) == []
