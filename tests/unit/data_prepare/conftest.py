"""Prepare tests: offline, a private `datasets` cache, the fixture mirror and NVIDIA's output."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hf_offline import go_offline, offline_env

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
    monkeypatch.delenv("HF_TOKEN", raising=False)
    go_offline(tmp_path_factory.mktemp("hf-cache"), monkeypatch)
    yield


@pytest.fixture(scope="session")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`data prepare all --mirror FIXTURE --output DIR`, run once through the CLI."""
    from harness import run_cli

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
        env=offline_env(base),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return out


def mirror_copy(tmp_path: Path) -> Path:
    """A writable copy of the fixture mirror, to break."""
    copy = tmp_path / "mirror"
    shutil.copytree(MIRROR, copy)
    return copy
