"""`window_samples.jsonl`: appended and flushed line by line, read back after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.store.window_samples import WindowSample, WindowSampleWriter, read_window_samples


def test_each_sample_is_on_disk_as_soon_as_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "cell" / "window_samples.jsonl"
    writer = WindowSampleWriter(path)
    writer.write(WindowSample(0.0012, 1, 0))
    # Read while the writer is still open: a crash now keeps this line.
    assert path.read_bytes() == (
        b'{"t_s":0.0012,"num_requests_running":1,"num_requests_waiting":0}\n'
    )
    writer.write(WindowSample(0.251, None, None))
    writer.close()
    assert read_window_samples(path) == [
        WindowSample(0.0012, 1, 0),
        WindowSample(0.251, None, None),
    ]
    # A fresh attempt at the cell starts the file afresh.
    WindowSampleWriter(path).close()
    assert read_window_samples(path) == []


def test_a_line_cut_by_a_crash_is_dropped_and_a_bad_line_before_it_is_named(tmp_path: Path) -> None:
    path = tmp_path / "window_samples.jsonl"
    path.write_bytes(b'{"t_s":0.0,"num_requests_running":2,"num_requests_waiting":0}\n{"t_s":0.2')
    assert read_window_samples(path) == [WindowSample(0.0, 2, 0)]
    path.write_bytes(
        b'{"t_s":0.0}\n{"t_s":0.2,"num_requests_running":2,"num_requests_waiting":0}\n'
    )
    with pytest.raises(SpecbenchError, match=r"window_samples.jsonl:1: not a window sample"):
        read_window_samples(path)
