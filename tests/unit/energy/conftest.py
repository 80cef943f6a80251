"""The stand-in libraries' folder: first on `sys.path` for one test, with any cached
`pynvml` / `amdsmi` module dropped before and after, so each test imports its own."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

LIBRARIES = ("pynvml", "amdsmi")


@pytest.fixture
def library_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder the test writes `pynvml.py` / `amdsmi.py` into, importable as those names."""
    folder = tmp_path / "libraries"
    folder.mkdir()
    for name in LIBRARIES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    yield folder
    for name in LIBRARIES:
        sys.modules.pop(name, None)
