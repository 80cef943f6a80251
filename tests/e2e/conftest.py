"""Session fixtures of the end-to-end tests: the shared real vLLM servers (vllm_pool.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from vllm_pool import VllmServers, counting_vllm_bin, require_real_vllm


@pytest.fixture(scope="session")
def vllm_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The vllm executable every real-vLLM test uses (counting shim when asked)."""
    require_real_vllm()
    return counting_vllm_bin(tmp_path_factory.mktemp("vllm-bin"))


@pytest.fixture(scope="session")
def vllm_servers(vllm_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServers]:
    max_alive = int(os.environ.get("SPECBENCH_TEST_MAX_SERVERS", "3"))
    pool = VllmServers(tmp_path_factory.mktemp("vllm-logs"), vllm_bin, max_alive)
    try:
        yield pool
    finally:
        leftovers = pool.close()
    assert not leftovers, f"servers left processes behind: {leftovers}"
