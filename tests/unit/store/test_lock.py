"""The writer's lock on a results directory: exclusive for a run, shared among Slurm shards."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.store.lock import LOCK_FILE, results_lock, submitter_lock


def test_a_second_exclusive_writer_is_refused_with_the_holder(tmp_path: Path) -> None:
    with results_lock(tmp_path, "2026-01-02T03:04:05.000+00:00"):
        with pytest.raises(SpecbenchError) as caught, results_lock(tmp_path, "later"):
            pass
        message = str(caught.value)
        assert message.startswith(f"{tmp_path}: another specbench is writing here (pid ")
        assert f"pid {os.getpid()} on host {socket.gethostname()}" in message
        assert "since 2026-01-02T03:04:05.000+00:00" in message
        assert message.endswith("use another --output")
    with results_lock(tmp_path, "after"):  # released on exit
        assert b'"started_at":"after"' in (tmp_path / LOCK_FILE).read_bytes()


def test_shards_share_the_lock_but_keep_an_exclusive_writer_out(tmp_path: Path) -> None:
    with (
        results_lock(tmp_path, "a", shared=True),
        results_lock(tmp_path, "b", shared=True),
        pytest.raises(SpecbenchError, match="another specbench is writing here"),
        results_lock(tmp_path, "c"),
    ):
        pass
    with (
        results_lock(tmp_path, "d"),
        pytest.raises(SpecbenchError),
        results_lock(tmp_path, "e", shared=True),
    ):
        pass


def test_a_garbled_lock_file_still_refuses_in_one_line(tmp_path: Path) -> None:
    with results_lock(tmp_path, "x"):
        (tmp_path / LOCK_FILE).write_bytes(b"\xff\x00garbage")
        with (
            pytest.raises(SpecbenchError, match=r"\(holder unknown\)"),
            results_lock(tmp_path, "y"),
        ):
            pass


def test_a_slurm_submitter_is_alone_among_submitters_and_beside_its_jobs(tmp_path: Path) -> None:
    with submitter_lock(tmp_path, "first"):
        with results_lock(tmp_path, "job", shared=True):  # its jobs start while it watches
            pass
        with (
            pytest.raises(SpecbenchError, match=r"pid \d+ on host .* since first"),
            submitter_lock(tmp_path, "second"),
        ):
            pass
        with (
            pytest.raises(SpecbenchError, match="another specbench is writing here"),
            results_lock(tmp_path, "local run"),
        ):
            pass
    with (
        results_lock(tmp_path, "local run"),
        pytest.raises(SpecbenchError, match="since local run"),
        submitter_lock(tmp_path, "submitter"),
    ):
        pass
    with submitter_lock(tmp_path, "after"):  # both released on exit
        pass
