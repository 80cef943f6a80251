"""Results files honour the umask, as `open` would: others can read a shared results folder.

`mkstemp` makes its file 0600 whatever the umask, so before this every summary, manifest,
report and gate file was readable by its writer alone.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from harness.cli import run_cli

from specbench.store.files import write_atomic, write_json

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "runs"


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_an_atomic_write_gets_the_mode_open_would_give(
    tmp_path: Path, umask: int, mode: int
) -> None:
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "a.txt", "a")
        write_json(tmp_path / "b.json", {"b": 1})
        with (tmp_path / "c.txt").open("w") as handle:  # what `open` gives, for comparison
            handle.write("c")
    finally:
        os.umask(old)
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in tmp_path.iterdir()}
    assert modes == {"a.txt": mode, "b.json": mode, "c.txt": mode}


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640)])
def test_every_file_a_report_writes_honours_the_umask(
    tmp_path: Path, umask: int, mode: int
) -> None:
    results = tmp_path / "run"
    shutil.copytree(RUNS / "tiny-vllm-ngram", results)
    done = run_cli("report", results, umask=umask)
    assert done.returncode == 0, done.stderr
    written = [path for path in (results / "report").rglob("*") if path.is_file()]
    assert len(written) >= 10  # markdown, HTML, CSV, parquet, figures
    wrong = {
        str(path.relative_to(results)): oct(stat.S_IMODE(path.stat().st_mode))
        for path in written
        if stat.S_IMODE(path.stat().st_mode) != mode
    }
    assert wrong == {}
