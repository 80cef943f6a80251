"""Data tests never touch the network and never share a `datasets` cache with the user."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hf_offline import go_offline

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(autouse=True)
def offline_datasets(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    go_offline(tmp_path_factory.mktemp("hf-cache"), monkeypatch)
    yield
