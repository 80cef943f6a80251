"""A suite names a data folder once (`data_dir`, `run --data-dir`); `--dry-run` loads datasets."""

from __future__ import annotations

import time
from pathlib import Path

from harness import REPO, run_cli
from hf_offline import offline_env

from specbench.data.check import with_data_dir
from specbench.run.preflight import load_plan_workload
from specbench.suite import load_suite
from specbench.suite.model import workload_keys

from .conftest import MIRROR

CARD = REPO / "suites" / "minimax-m3-mxfp4-eagle3.toml"


def test_with_data_dir_maps_only_speed_bench_specs_without_a_path() -> None:
    assert with_data_dir("speed-bench:qualitative", "/d") == "speed-bench:qualitative:/d"
    assert with_data_dir("speed-bench:qualitative:/mine", "/d") == "speed-bench:qualitative:/mine"
    assert with_data_dir("mt-bench", "/d") == "mt-bench"
    assert with_data_dir("speed-bench:qualitative", None) == "speed-bench:qualitative"


def test_a_suite_data_dir_applies_to_every_speed_bench_workload(
    prepared: Path, tmp_path: Path
) -> None:
    text = CARD.read_text()
    suite_file = tmp_path / "card.toml"
    suite_file.write_text(f'data_dir = "{prepared}"\n' + text)
    suite = load_suite(suite_file)
    assert suite.data_dir == str(prepared)
    assert [w.dataset for w in suite.workloads] == [
        f"speed-bench:{c}:{prepared}"
        for c in (
            "qualitative",
            "throughput_1k",
            "throughput_8k",
            "throughput_16k",
            "throughput_32k",
        )
    ]
    # Loaded as the run's preflight loads them (run and --dry-run), rows and all.
    for workload, key in zip(suite.workloads, workload_keys(suite.workloads), strict=True):
        loaded = load_plan_workload(workload, key)
        assert loaded.conversations and loaded.source.startswith(str(prepared.resolve()))


def test_card_dry_run_passes_on_the_prepared_folder_and_fails_on_placeholders(
    prepared: Path, tmp_path: Path
) -> None:
    env = offline_env(tmp_path)
    # The dry run's preflight resolves the vllm executable as the launch does: a stand-in,
    # the card's pinned 0.27.1, on GPUs it cannot check here.
    vllm = tmp_path / "vllm"
    vllm.write_text('#!/bin/sh\n[ "$1" = --version ] && echo 0.27.1\nexit 0\n')
    vllm.chmod(0o755)
    env["SPECBENCH_VLLM"] = str(vllm)
    started = time.monotonic()
    ok = run_cli("run", CARD, "--dry-run", "--data-dir", prepared, "--gpus-unchecked", env=env)
    assert ok.returncode == 0, ok.stderr
    assert f"speed-bench:throughput_32k:{prepared}" in ok.stdout
    assert time.monotonic() - started < 120  # offline; seconds on an idle machine
    bad = run_cli(
        "run", CARD, "--dry-run", "--data-dir", MIRROR / "nvidia" / "SPEED-Bench", env=env
    )
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "19 of 21 rows are placeholders" in lines[0]
    assert "specbench data prepare qualitative --output DIR" in lines[0]
    assert "--data-dir DIR" in lines[0]
    hub = run_cli("run", CARD, "--dry-run", env=env)  # the hub, offline: one line, no retries
    assert hub.returncode == 2
    assert hub.stderr.strip().splitlines() == [
        line for line in hub.stderr.strip().splitlines() if line.startswith("error:")
    ]
    assert "HF_HUB_OFFLINE=1" in hub.stderr and "Retrying" not in hub.stderr
