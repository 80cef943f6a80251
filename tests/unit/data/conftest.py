"""Data tests never touch the network and never share a `datasets` cache with the user."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(autouse=True)
def offline_datasets(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    cache = tmp_path_factory.mktemp("hf-cache")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(cache))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache / "datasets"))
    import datasets.config
    import huggingface_hub.constants

    # Both libraries read these at import time, which may precede this fixture: patch them too.
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache / "datasets")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    yield
