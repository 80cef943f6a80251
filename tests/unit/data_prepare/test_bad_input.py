"""Each bad input of `data prepare`: one line, exit 2, nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import run_cli
from hf_offline import offline_env

from specbench.common.errors import SpecbenchError
from specbench.data.prepare import pipeline

from .conftest import MIRROR, mirror_copy


def _prepare(tmp_path: Path, *args: str | Path):
    return run_cli("data", "prepare", *args, env=offline_env(tmp_path), timeout=300)


def _one_line(result) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def _nothing_written(parent: Path, name: str = "out") -> None:
    assert not (parent / name).exists()
    assert not list(parent.glob(f".{name}.partial-*"))


def test_a_mirror_missing_a_repo_names_it_and_the_download_command(tmp_path: Path) -> None:
    mirror = mirror_copy(tmp_path)
    (mirror / "cais" / "hle").rename(mirror / "cais" / "gone")
    line = _one_line(
        _prepare(tmp_path, "qualitative", "--mirror", mirror, "--output", tmp_path / "out")
    )
    assert "no folder cais/hle/" in line
    assert (
        f"huggingface-cli download --repo-type dataset cais/hle --revision "
        f"021a3d71f516a7ac28ceb8d284969902edf1edeb --local-dir {mirror}/cais/hle" in line
    )
    _nothing_written(tmp_path)


def test_a_mirror_missing_a_url_file_names_the_fetch_command(tmp_path: Path) -> None:
    mirror = mirror_copy(tmp_path)
    (mirror / "urls/opencompass.openxlab.space/utils/AdaLEval/textsort_2k.json").unlink()
    line = _one_line(_prepare(tmp_path, "all", "--mirror", mirror, "--output", tmp_path / "out"))
    assert "no file urls/opencompass.openxlab.space/utils/AdaLEval/textsort_2k.json" in line
    assert "curl -L --create-dirs" in line
    _nothing_written(tmp_path)


def test_a_corrupt_parquet_is_one_line(tmp_path: Path) -> None:
    mirror = mirror_copy(tmp_path)
    (mirror / "TIGER-Lab/MMLU-Pro/data/test-00000-of-00001.parquet").write_bytes(b"PAR1 broken")
    line = _one_line(
        _prepare(tmp_path, "qualitative", "--mirror", mirror, "--output", tmp_path / "out")
    )
    assert "TIGER-Lab/MMLU-Pro" in line and "cannot load" in line
    _nothing_written(tmp_path)


def test_a_revision_that_does_not_match_the_pin(tmp_path: Path) -> None:
    mirror = mirror_copy(tmp_path)
    for meta in (mirror / "Helsinki-NLP/opus-100/.cache").rglob("*.metadata"):
        meta.write_text("0" * 40 + "\n")
    line = _one_line(
        _prepare(tmp_path, "qualitative", "--mirror", mirror, "--output", tmp_path / "out")
    )
    assert (
        f"holds revision {'0' * 40}, not the pinned 805090dc28bf78897da9641cdf08b61287580df9"
        in line
    )
    _nothing_written(tmp_path)


def test_a_config_that_does_not_exist(tmp_path: Path) -> None:
    line = _one_line(
        _prepare(tmp_path, "throughput_4k", "--mirror", MIRROR, "--output", tmp_path / "out")
    )
    assert "unknown SPEED-Bench config 'throughput_4k'; allowed: qualitative" in line
    _nothing_written(tmp_path)


def test_an_output_that_is_a_file_or_not_writable(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("mine")
    line = _one_line(
        _prepare(tmp_path, "qualitative", "--mirror", MIRROR, "--output", tmp_path / "out")
    )
    assert "is a file" in line
    assert (tmp_path / "out").read_text() == "mine"
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    line = _one_line(_prepare(tmp_path, "qualitative", "--mirror", MIRROR, "--output", foreign))
    assert "not empty and holds no prepared.json" in line
    line = _one_line(
        _prepare(tmp_path, "qualitative", "--mirror", MIRROR, "--output", tmp_path / "no" / "out")
    )
    assert "does not exist" in line


def test_hub_reads_with_hf_hub_offline_fail_at_once_in_one_line(tmp_path: Path) -> None:
    line = _one_line(_prepare(tmp_path, "qualitative", "--output", tmp_path / "out"))
    assert "HF_HUB_OFFLINE is set" in line and "--mirror DIR" in line


def test_an_interrupted_write_leaves_no_folder_that_looks_prepared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = []
    real = pipeline.writer.write_config

    def write_then_stop(folder: Path, config: str, rows: list, features: object) -> dict:
        written.append(config)
        files = real(folder, config, rows, features)
        if len(written) == 2:
            raise KeyboardInterrupt  # Ctrl-C after the second config was written
        return files

    monkeypatch.setattr(pipeline.writer, "write_config", write_then_stop)
    with pytest.raises(KeyboardInterrupt):
        pipeline.prepare(["all"], tmp_path / "out", MIRROR)
    assert written == ["qualitative", "throughput_1k"]
    _nothing_written(tmp_path)


def test_a_rerun_replaces_a_prepared_folder_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    pipeline.prepare(["qualitative"], out, MIRROR)
    (out / "stale.txt").write_text("from before")
    content = pipeline.prepare(["throughput_1k"], out, MIRROR)
    assert list(content["configs"]) == ["throughput_1k"]
    assert not (out / "stale.txt").exists() and not (out / "qualitative.jsonl").exists()
    with pytest.raises(SpecbenchError, match="no such folder"):
        pipeline.prepare(["qualitative"], tmp_path / "x", tmp_path / "nowhere")
