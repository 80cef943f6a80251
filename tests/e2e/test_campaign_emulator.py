"""`specbench run SUITE` end to end with emulator servers started and stopped by the runner."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from gpu_tools import AMD_SMI_26, stand_in
from harness import (
    REPO,
    background_cli,
    one_line,
    run_cli,
    server_pids,
    summary_paths,
    write_campaign_suite,
)


def run(*args: str | Path, **kwargs) -> subprocess.CompletedProcess[str]:
    return run_cli("run", *args, **kwargs)


def test_campaign_runs_every_cell_then_a_rerun_measures_none(tmp_path):
    suite, tag = write_campaign_suite(tmp_path)
    out = tmp_path / "results"
    first = run(suite, "--output", out)
    assert first.returncode == 0, first.stderr
    assert "4 cells measured, 0 already complete, 0 failed" in first.stdout
    cells = summary_paths(out)
    assert [p.relative_to(out).parts[:3] for p in cells] == [
        ("baseline", "tiny", "c1"),
        ("baseline", "tiny", "c4"),
        ("eagle3", "tiny", "c1"),
        ("eagle3", "tiny", "c4"),
    ]
    eagle = json.loads((out / "eagle3" / "tiny" / "c4" / "r0" / "summary.json").read_text())
    assert eagle["spec_decode"]["acceptance_length"] > 2.0
    assert (
        json.loads((out / "baseline" / "tiny" / "c4" / "r0" / "summary.json").read_text())[
            "spec_decode"
        ]
        is None
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["suite_hash"]) == 64
    assert manifest["servers"]["baseline"]["baseline"] is True
    assert manifest["servers"]["eagle3"]["provenance"]["engine"] == "emulator"
    assert manifest["schema_version"] == 2
    assert manifest["runs"][-1]["cells_failed"] == []
    assert len(manifest["runs"][-1]["cells_measured"]) == 4
    assert "speedup" in first.stdout and "speedup" not in first.stderr  # the table: stdout
    mtimes = [p.stat().st_mtime_ns for p in cells]

    again = run(suite, "--output", out)
    assert again.returncode == 0, again.stderr
    assert "0 cells measured, 4 already complete" in again.stdout
    assert "starting" not in again.stderr  # nothing to measure: no server was started
    assert [p.stat().st_mtime_ns for p in summary_paths(out)] == mtimes
    assert server_pids(tag) == []


def test_a_changed_measured_field_refuses_the_old_results_dir(tmp_path):
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
    out = tmp_path / "results"
    assert run(suite, "--output", out).returncode == 0
    changed = run(suite, "--output", out, "--set", "workloads.0.max_tokens=9")
    assert changed.returncode == 2
    assert one_line(changed.stderr) == (
        f"error: {out}: workload 'tiny' was measured here with max_tokens=8, this run asks 9; "
        "give the workload a new name (`name` in the suite, --workload-name in bench), "
        "measure its cells again with --force, or use a new --output"
    )
    assert "Traceback" not in changed.stderr


def test_sigint_mid_campaign_stops_servers_keeps_cells_and_rerun_completes(tmp_path):
    suite, tag = write_campaign_suite(tmp_path, step_ms=8.0, concurrency=(1, 2, 4), max_tokens=48)
    out = tmp_path / "results"
    with background_cli("run", suite, "--output", out) as process:
        deadline = time.monotonic() + 120
        while not summary_paths(out) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert summary_paths(out), "no cell completed in time"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    time.sleep(0.5)
    assert server_pids(tag) == []
    kept = summary_paths(out)
    assert 1 <= len(kept) < 6

    rerun = run(suite, "--output", out)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{6 - len(kept)} cells measured, {len(kept)} already complete" in rerun.stdout
    assert len(summary_paths(out)) == 6


def test_a_server_killed_mid_campaign_is_restarted_and_later_cells_succeed(tmp_path):
    suite, tag = write_campaign_suite(tmp_path, step_ms=10.0, concurrency=(1, 2, 4), max_tokens=64)
    out = tmp_path / "results"
    with background_cli("run", suite, "--output", out, "--server", "eagle3") as process:
        first_cell = out / "eagle3" / "tiny" / "c1" / "r0" / "summary.json"
        deadline = time.monotonic() + 120
        while not first_cell.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first_cell.exists()
        victims = server_pids(tag)
        assert len(victims) == 1
        os.kill(victims[0], signal.SIGKILL)
        _, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stderr  # finished, with a failed cell
    failure = json.loads((out / "eagle3" / "tiny" / "c2" / "r0" / "failure.json").read_text())
    assert failure["server_alive"] is False
    assert "restart 1/2" in stderr
    assert (out / "eagle3" / "tiny" / "c4" / "r0" / "summary.json").exists()
    assert server_pids(tag) == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runs"][-1]["cells_failed"] == ["eagle3/tiny/c2/r0"]

    rerun = run(suite, "--output", out, "--server", "eagle3")
    assert rerun.returncode == 0, rerun.stderr
    assert "1 cells measured, 2 already complete" in rerun.stdout
    assert not (out / "eagle3" / "tiny" / "c2" / "r0" / "failure.json").exists()


def card_dry_run(tmp_path: Path, bin_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The card suite's dry run with only `bin_dir` on PATH (whatever GPU tools it holds),
    vllm a stand-in there that says it is the card's 0.27.1 and whose help tells nothing."""
    vllm = bin_dir / "vllm"
    if not vllm.exists():
        bin_dir.mkdir(parents=True, exist_ok=True)
        vllm.write_text('#!/bin/sh\n[ "$1" = --version ] && echo 0.27.1\nexit 0\n')
        vllm.chmod(0o755)
    # Preflight loads every dataset: the card's SPEED-Bench configs come from a prepared folder
    # (NVIDIA's recorded output for the fixture mirror, in Model-Optimizer's layout).
    prepared = REPO / "tests" / "fixtures" / "speed_bench_nvidia"
    card_suite = REPO / "suites" / "minimax-m3-mxfp4-eagle3.toml"
    env = {**os.environ, "PATH": str(bin_dir)}
    return run(card_suite, "--dry-run", "--vllm-bin", vllm, "--data-dir", prepared, *args, env=env)


def test_dry_run_prints_the_amd_card_command_on_its_gpus(tmp_path):
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "amd-smi", AMD_SMI_26)
    result = card_dry_run(tmp_path, bin_dir)
    assert result.returncode == 0, result.stderr
    vllm = bin_dir / "vllm"
    lines = result.stdout.splitlines()
    # One line for the node's GPUs, from amd-smi static and version (stand-ins on PATH).
    assert [line for line in lines if line.startswith("GPUs:")] == [
        "GPUs: 8 × AMD Instinct MI355X, 294,896 MiB each, driver 6.16.6, ROCm 7.2.0 (amd-smi)"
    ]
    card = (
        f"VLLM_ROCM_USE_AITER=1 VLLM_SERVER_DEV_MODE=1 {vllm} serve amd/MiniMax-M3-MXFP4 "
        "--trust-remote-code "
        "--tensor-parallel-size 8 --block-size 128 --attention-backend TRITON_ATTN "
        "--moe-backend aiter "
        '--speculative-config \'{"method":"eagle3","model":"amd/MiniMax-M3-EAGLE3.1",'
        '"num_speculative_tokens":3,"attention_backend":"TRITON_ATTN"}\''
    )
    commands = [line.strip() for line in lines if "vllm serve" in line]
    # baseline and eagle3, each at the qualitative 12,288 and the throughput 40,960 max len
    assert len(commands) == 4
    assert sum("--max-model-len 40960" in c for c in commands) == 2
    speculative = next(
        c for c in commands if "--speculative-config" in c and "--max-model-len 12288" in c
    )
    # The card's command plus the card's serving max model len. The card's vLLM 0.27.1 has no
    # per-request acceptance flag (0.29 on): left out, and each speculative start says why.
    assert speculative.replace(" --max-model-len 12288", "") == card
    assert "--per-request-spec-decode-metrics" not in result.stdout.replace("left out --per", "")
    left_out = (
        "note: left out --per-request-spec-decode-metrics: vLLM 0.27.1 predates 0.29, the "
        "release that added it (per-category AL falls back to tokens per chunk, an estimate)"
    )
    assert [line.strip() for line in lines].count(left_out) == 2
    assert "  eagle3 [vllm, speculative eagle3, 8 GPU(s), 22 cells]" in lines


def test_dry_run_without_a_gpu_tool_refuses_or_says_so_in_one_line(tmp_path):
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "amd-smi", None)  # there, but it fails (no driver: a login node)
    refused = card_dry_run(tmp_path, bin_dir)
    assert refused.returncode == 2, refused.stdout
    assert refused.stdout == ""
    unanswered = (
        "no GPU tool answered (amd-smi: exit 1; rocm-smi: not found; nvidia-smi: not found)"
    )
    assert refused.stderr.strip().splitlines() == [
        f"error: server 'baseline' needs TP × PP × DP = 8 × 1 × 1 = 8 GPUs and {unanswered}: "
        "run where one of them works, or pass --gpus-unchecked to start it without the check"
    ]
    unchecked = card_dry_run(tmp_path, bin_dir, "--gpus-unchecked")
    assert unchecked.returncode == 0, unchecked.stderr
    lines = unchecked.stdout.splitlines()
    assert [line for line in lines if line.startswith("GPUs:")] == [
        f"GPUs: unchecked: {unanswered}; started anyway (--gpus-unchecked)"
    ]
    assert "  eagle3 [vllm, speculative eagle3, 8 GPU(s) unchecked, 22 cells]" in lines


def test_bad_suites_get_one_line_and_exit_2(tmp_path):
    suite, _ = write_campaign_suite(tmp_path)
    text = suite.read_text()
    cases = {
        "unknown-key": text.replace("repeats = 1", "repeats = 1\nrepeatz = 2"),
        "no-baseline": text.replace("baseline = true", "baseline = false"),
        "bad-toml": text.replace("[servers.eagle3]", "[servers.eagle3"),
    }
    for name, body in cases.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(body)
        result = run(path, "--output", tmp_path / "x")
        assert result.returncode == 2, (name, result.stderr)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and f"{name}.toml" in lines[0], (name, result.stderr)
    result = run(suite, "--output", tmp_path / "x", "--endpoint", "nosuch=http://127.0.0.1:1")
    assert result.returncode == 2 and "nosuch" in result.stderr


def test_endpoint_attaches_to_a_running_server_instead_of_starting_one(tmp_path):
    from specbench.launch import EmulatorOverrides, ServerConfig, ServerProcess, SpeculativeConfig
    from specbench.suite import load_suite

    suite, tag = write_campaign_suite(tmp_path, concurrency=(2,), max_tokens=16)
    config = load_suite(suite).servers["eagle3"]
    assert config.speculative == SpeculativeConfig(
        method="eagle3", model="draft", num_speculative_tokens=3
    )
    assert isinstance(config.emulator, EmulatorOverrides) and isinstance(config, ServerConfig)
    out = tmp_path / "results"
    with ServerProcess(config, name="outside", log_dir=tmp_path) as running:
        result = run(
            suite, "--output", out, "--server", "eagle3", "--endpoint", f"eagle3={running.base_url}"
        )
        assert running.pid in server_pids(tag)  # still ours, still up: the runner did not stop it
    assert result.returncode == 0, result.stderr
    assert "starting" not in result.stderr
    summary = json.loads((out / "eagle3" / "tiny" / "c2" / "r0" / "summary.json").read_text())
    assert summary["endpoint"] == running.base_url
    assert summary["spec_decode"]["acceptance_length"] > 1.5
