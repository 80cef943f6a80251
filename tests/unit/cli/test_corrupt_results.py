"""Corrupt result files: every reader says which file and what to do, in one line, exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from harness import REPO, run_cli

from specbench.common.errors import SpecbenchError
from specbench.store import read_summary
from specbench.store.manifest import read_manifest

RUN = REPO / "tests" / "fixtures" / "runs" / "tiny-vllm-ngram"
CELL = Path("ngram") / "lossless-prompts" / "c1" / "r0"
CORRUPTIONS = {
    "binary": bytes(range(256)) * 4,
    "wrong-shape": b'{"schema_version": 2, "label": 5}',
    "not-an-object": b"[1, 2]",
}


def corrupted(tmp_path: Path, file: Path, content: bytes) -> Path:
    results = tmp_path / "results"
    shutil.copytree(RUN, results)
    (results / file).write_bytes(content)
    return results


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_a_corrupt_summary_is_one_line_for_every_reader(tmp_path: Path, kind: str) -> None:
    results = corrupted(tmp_path, CELL / "summary.json", CORRUPTIONS[kind])
    path = results / CELL / "summary.json"
    with pytest.raises(SpecbenchError) as caught:
        read_summary(results / CELL)  # what `run` reads to skip a complete cell
    assert str(caught.value).startswith(f"{path}: ") and "rerun to measure the cell" in str(
        caught.value
    )
    baseline = tmp_path / "baseline.json"
    assert run_cli("baseline", "save", RUN, "--out", baseline).returncode == 0
    gate = ("gate", results, "--baseline", baseline)
    for args in (("report", results), ("lossless", results), gate):
        result = run_cli(*args)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2, (args, result.stderr)
        assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), (args, lines)
        assert "move the cell's folder away" in lines[0]


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_a_corrupt_manifest_is_one_line_with_what_to_do(tmp_path: Path, kind: str) -> None:
    results = corrupted(tmp_path, Path("manifest.json"), CORRUPTIONS[kind])
    with pytest.raises(SpecbenchError) as caught:
        read_manifest(results)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{results / 'manifest.json'}: ")
    assert message.endswith("measure into a new --output (each cell's files are intact)")
    result = run_cli("report", results)
    assert result.returncode == 2 and "Traceback" not in result.stderr
