"""Tests that load datasets never touch the network and never share a cache with the user."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def go_offline(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`datasets` and the hub offline for the test, their caches under `cache`."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(cache))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache / "datasets"))
    import datasets.config
    import huggingface_hub.constants

    # Both libraries read these at import time, which may precede the test: patch them too.
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache / "datasets")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


def offline_env(tmp_path: Path) -> dict[str, str]:
    """This environment for a `specbench` subprocess: offline, its HF home under `tmp_path`,
    no SPEED-Bench repo override and no token."""
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
    }
    env.pop("SPECBENCH_SPEED_BENCH_REPO", None)
    env.pop("HF_TOKEN", None)
    return env
