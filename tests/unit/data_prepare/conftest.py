"""Prepare tests: offline, a private `datasets` cache, the fixture mirror and NVIDIA's output."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MIRROR = FIXTURES / "speed_bench_mirror"
NVIDIA = FIXTURES / "speed_bench_nvidia"
CONFIGS = (
    "qualitative",
    "throughput_1k",
    "throughput_2k",
    "throughput_8k",
    "throughput_16k",
    "throughput_32k",
)


@pytest.fixture(autouse=True)
def offline(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    cache = tmp_path_factory.mktemp("hf-cache")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(cache))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache / "datasets"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache / "datasets")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    yield


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
    }
    env.pop("SPECBENCH_SPEED_BENCH_REPO", None)
    env.pop("HF_TOKEN", None)
    return env


@pytest.fixture(scope="session")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`data prepare all --mirror FIXTURE --output DIR`, run once through the CLI."""
    from helpers import run_cli

    base = tmp_path_factory.mktemp("prepared")
    out = base / "data"
    result = run_cli(
        "data",
        "prepare",
        "all",
        "--mirror",
        MIRROR,
        "--output",
        out,
        env=cli_env(base),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return out


def mirror_copy(tmp_path: Path) -> Path:
    """A writable copy of the fixture mirror, to break."""
    copy = tmp_path / "mirror"
    shutil.copytree(MIRROR, copy)
    return copy
