"""Preflight end to end: what `run` refuses before any server starts, what `--dry-run` shows,
and a server that cannot start counted as one failure (emulator servers, stand-in vllm)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from harness import run_cli, running_emulator, summary_paths, write_campaign_suite

#: A vllm that cannot import its GPU runtime, as a ROCm build on a host without it.
HIP_VLLM = """#!/bin/sh
echo "Traceback (most recent call last):" >&2
echo "ImportError: libamdhip64.so.6: cannot open shared object file: No such file or directory" >&2
exit 1
"""


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli("run", *args)


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def vllm_suite(folder: Path, data: Path) -> Path:
    """Two vllm servers × concurrency 1, 4 × 2 repeats: 8 cells."""
    suite = folder / "vllm.toml"
    suite.write_text(
        'name = "hip"\nrepeats = 2\n[target]\nmodel = "org/m"\n'
        "[servers.baseline]\nbaseline = true\n"
        '[servers.eagle3]\nspeculative = { method = "eagle3", model = "org/d", '
        "num_speculative_tokens = 3 }\n"
        f'[[workloads]]\nname = "tiny"\ndataset = "{data}"\nconcurrency = [1, 4]\nmax_tokens = 8\n'
    )
    return suite


def test_an_unreachable_endpoint_is_refused_before_the_baseline_starts(tmp_path):
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1, 4))
    out = tmp_path / "results"
    started = time.monotonic()
    result = run(suite, "--output", out, "--endpoint", "eagle3=http://127.0.0.1:9")
    assert result.returncode == 2, result.stderr
    (line,) = error_lines(result)
    assert line.startswith("error: server 'eagle3' at http://127.0.0.1:9: ")
    assert "unreachable" in line
    assert "server baseline" not in result.stderr  # never started
    assert not summary_paths(out) and not (out / "logs").exists()
    # Nothing written that binds the folder: the corrected run goes ahead.
    assert not (out / "manifest.json").exists()
    assert time.monotonic() - started < 60


def test_an_attached_server_with_another_k_is_refused_or_recorded_as_it_is(tmp_path):
    suite, model = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
    out = tmp_path / "results"
    args = ("--server", "eagle3", "--output", out)
    with running_emulator(
        "--model", model, "--num-speculative-tokens", "2", "--acceptance", "0.8,0.75"
    ) as url:
        refused = run(suite, *args, "--endpoint", f"eagle3={url}")
        dry = run(suite, *args, "--endpoint", f"eagle3={url}", "--dry-run")
        accepted = run(suite, *args, "--endpoint", f"eagle3={url}", "--accept-server-values")
        # The same rerun resumes: the manifest holds the server's values it was measured with.
        again = run(suite, *args, "--endpoint", f"eagle3={url}", "--accept-server-values")
        pinned = run(
            suite, *args, "--endpoint", f"eagle3={url}", "--dry-run",
            "--set", 'servers.eagle3.vllm_version="0.31.0"',
        )  # fmt: skip
    for result in (refused, dry):
        assert result.returncode == 2, result.stderr
        (line,) = error_lines(result)
        assert f"--endpoint eagle3={url} does not match the suite's server 'eagle3'" in line
        assert "num_speculative_tokens: the suite says 3, the server 2" in line
        assert "--accept-server-values" in line
    assert accepted.returncode == 0, accepted.stderr
    assert again.returncode == 0, again.stderr
    assert "0 cells measured, 1 already complete, 0 failed" in again.stdout
    assert len(summary_paths(out)) == 1
    assert pinned.returncode == 2, pinned.stderr
    (line,) = error_lines(pinned)
    assert "vllm_version: the suite says '0.31.0', the server '0.32.0' (GET /version)" in line
    manifest = json.loads((out / "manifest.json").read_text())
    record = manifest["servers"]["eagle3"]
    assert record["accepted_from_server"] == {"num_speculative_tokens": {"suite": 3, "server": 2}}
    assert manifest["suite"]["servers"]["eagle3"]["speculative"]["num_speculative_tokens"] == 2


def test_an_attached_server_that_does_not_speculate_is_refused(tmp_path):
    suite, model = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=8)
    with running_emulator("--model", model, "--no-spec") as url:
        result = run(suite, "--server", "eagle3", "--endpoint", f"eagle3={url}", "--dry-run")
    assert result.returncode == 2, result.stderr
    (line,) = error_lines(result)
    assert "speculative: the suite says True, the server False" in line


def test_dry_run_shows_the_selected_cells_the_launch_command_and_attached_servers(tmp_path):
    suite, model = write_campaign_suite(tmp_path, concurrency=(1, 4))
    out = tmp_path / "results"
    measured = run(
        suite, "--output", out, "--server", "eagle3", "--set", "workloads.0.concurrency=[1]"
    )
    assert measured.returncode == 0, measured.stderr
    dry = run(suite, "--output", out, "--dry-run", "--server", "eagle3")
    assert dry.returncode == 0, dry.stderr
    # The cost estimate (priced from the cells already in --output) names cells too: ": …".
    cells = [
        line.strip()
        for line in dry.stdout.splitlines()
        if line.startswith("  eagle3/") and ":" not in line
    ]
    assert cells == ["eagle3/tiny/c1/r0 (complete)", "eagle3/tiny/c4/r0"]
    assert "baseline" not in dry.stdout.split("workloads")[0]  # the filter left it out
    assert "2 of its 4 cells selected; 1 already complete" in dry.stdout
    # The command the launch runs, with the variable the launch adds: the provenance's.
    (command,) = [line.strip() for line in dry.stdout.splitlines() if " emulate " in line]
    manifest = json.loads((out / "manifest.json").read_text())
    launched = manifest["servers"]["eagle3"]["provenance"]["command"]
    assert command.startswith("VLLM_SERVER_DEV_MODE=1 ")
    assert launched.startswith(command + " --host 127.0.0.1 --port ")
    with running_emulator("--model", model) as url:
        attached = run(suite, "--dry-run", "--output", out, "--endpoint", f"eagle3={url}")
    assert attached.returncode == 0, attached.stderr
    assert f"eagle3 [attached at {url}, 2 cells]: serves '{model}', speculative, K = 3" in (
        attached.stdout
    )
    assert attached.stdout.count(" emulate ") == 1  # the baseline's only


def test_dry_run_refuses_a_missing_vllm_executable(tmp_path):
    suite = vllm_suite(tmp_path, Path(__file__).parents[1] / "fixtures/custom/tiny.jsonl")
    result = run(suite, "--dry-run", "--vllm-bin", tmp_path / "no-such-vllm")
    assert result.returncode == 2, result.stderr
    (line,) = error_lines(result)
    assert "no-such-vllm" in line and "is not an executable" in line


def test_a_server_that_cannot_start_is_one_failure_with_its_log_and_exit_3(tmp_path):
    vllm = tmp_path / "vllm"
    vllm.write_text(HIP_VLLM)
    vllm.chmod(0o755)
    suite = vllm_suite(tmp_path, Path(__file__).parents[1] / "fixtures/custom/tiny.jsonl")
    out = tmp_path / "results"
    # No GPU tool on PATH, and the stand-in is no CPU build: refused before any start...
    (tmp_path / "no-tools").mkdir()
    env = {**os.environ, "PATH": str(tmp_path / "no-tools")}
    refused = run_cli("run", suite, "--output", out, "--vllm-bin", vllm, env=env)
    assert refused.returncode == 2, refused.stderr
    (line,) = error_lines(refused)
    assert "needs TP × PP × DP = 1 × 1 × 1 = 1 GPUs and no GPU tool answered" in line
    # ...unless acknowledged: then it is started, and its start fails as on a GPU-less node.
    result = run_cli("run", suite, "--output", out, "--vllm-bin", vllm, "--gpus-unchecked", env=env)
    assert result.returncode == 3, result.stderr
    (line,) = error_lines(result)
    for name in ("baseline", "eagle3"):
        assert f"server {name!r} would not start (3 more of its cells not run)" in line
    assert "ImportError: libamdhip64.so.6" in line
    failures = sorted(out.rglob("failure.json"))
    assert [p.relative_to(out).parts[0] for p in failures] == ["baseline", "eagle3"]
    for path in failures:
        record = json.loads(path.read_text())
        assert record["server_alive"] is False
        assert any("libamdhip64.so.6" in text for text in record["log_tail"])
    assert "cells not run: baseline/tiny/c1/r1, baseline/tiny/c4/r0, baseline/tiny/c4/r1" in (
        result.stderr
    )
    run_record = json.loads((out / "manifest.json").read_text())["runs"][-1]
    assert run_record["status"] == "server not started"
    assert len(run_record["cells_failed"]) == 2 and len(run_record["cells_not_run"]) == 6
