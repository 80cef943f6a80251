"""`specbench run` of vLLM servers on a node whose GPU tools are stand-ins: the manifest
records what amd-smi listed (product, VRAM, driver, ROCm), the report's provenance shows
it, and a run where no GPU tool answers says so in one line per start (--gpus-unchecked).

The `vllm` here is a script on PATH that says it is 0.27.1 and serves with the emulator
(`specbench emulate` on the port and model the launcher asks for): the launcher's whole
vLLM path runs (GPU check, version, flags, argv, readiness), on no GPU.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import uuid
from pathlib import Path

from gpu_tools import AMD_SMI_26, stand_in
from harness import REPO, run_cli
from harness.suite import DATA, workload

UNANSWERED = "no GPU tool answered (amd-smi: not found; rocm-smi: not found; nvidia-smi: not found)"


def stand_in_vllm(bin_dir: Path) -> Path:
    """`vllm --version` → 0.27.1; `vllm serve MODEL ... --host H --port P` → the emulator
    serving MODEL there (speculating when a --speculative-config is given)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "vllm"
    emulate = shlex.join([sys.executable, "-m", "specbench.cli.main", "emulate"])
    script.write_text(
        f"""#!/bin/sh
[ "$1" = --version ] && {{ echo 0.27.1; exit 0; }}
[ "$1" = serve ] || exit 0
model="$2"; shift 2
case "$model" in --help*) exit 0 ;; esac
host=127.0.0.1; port=8000; spec=--no-spec
while [ $# -gt 0 ]; do
  case "$1" in
    --host) host="$2"; shift ;;
    --port) port="$2"; shift ;;
    --speculative-config) spec="--num-speculative-tokens=3"; shift ;;
  esac
  shift
done
exec {emulate} --model "$model" --host "$host" --port "$port" "$spec"
"""
    )
    script.chmod(0o755)
    return script


def write_suite(folder: Path) -> Path:
    tag = f"emu-{uuid.uuid4().hex[:10]}"
    suite = folder / "suite.toml"
    suite.write_text(
        f"""
name = "{tag}"
repeats = 1

[target]
model = "{tag}"
tensor_parallel_size = 8

[servers.baseline]
baseline = true

[servers.eagle3]
speculative = {{ method = "eagle3", model = "draft", num_speculative_tokens = 3 }}
"""
        + workload(DATA, [2], 16)
    )
    return suite


def test_the_manifest_and_report_name_the_gpus_amd_smi_listed(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    vllm = stand_in_vllm(bin_dir)
    stand_in(bin_dir, "amd-smi", AMD_SMI_26)
    suite, out = write_suite(tmp_path), tmp_path / "results"
    env = {**os.environ, "PATH": str(bin_dir)}
    result = run_cli(
        "run", suite, "--output", out, "--vllm-bin", vllm, "--server", "eagle3", env=env
    )
    assert result.returncode == 0, result.stderr
    assert "1 cells measured, 0 already complete, 0 failed" in result.stdout
    # The card's 0.27.1 gets no per-request acceptance flag; the run says so once per start.
    left_out = "left out --per-request-spec-decode-metrics: vLLM 0.27.1 predates 0.29"
    assert (result.stdout + result.stderr).count(left_out) == 1
    recorded = json.loads((out / "manifest.json").read_text())["servers"]["eagle3"]["provenance"]
    inventory = recorded["gpu_inventory"]
    assert {key: inventory[key] for key in inventory if key != "output"} == {
        "tool": "amd-smi",
        "num_gpus": 8,
        "product": "AMD Instinct MI355X",
        "vram_mib": 294_896,
        "driver": "6.16.6",
        "rocm_version": "7.2.0",
        "cuda_version": None,
    }
    assert inventory["output"].startswith("$ amd-smi static --asic --vram --driver --json\n")
    assert recorded["gpu_check"] == (
        "8 × AMD Instinct MI355X, 294,896 MiB each, driver 6.16.6, ROCm 7.2.0 (amd-smi)"
    )
    assert "--per-request-spec-decode-metrics" not in recorded["argv"]
    report = run_cli("report", out, "--out", tmp_path / "report", "--format", "html")
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report" / "report.html").read_text()
    servers = page[page.index('id="provenance_servers-1"') :]
    row = servers[servers.index('<th scope="row">eagle3</th>') :]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row[: row.index("</tr>")])
    assert cells[-6:] == ["AMD Instinct MI355X", "294896", "6.16.6", "7.2.0", "n/a", "amd-smi"]


def test_a_run_no_gpu_tool_answers_for_says_so_in_one_line(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    vllm = stand_in_vllm(bin_dir)
    suite, out = write_suite(tmp_path), tmp_path / "results"
    env = {**os.environ, "PATH": str(bin_dir)}
    args = ("run", suite, "--output", out, "--vllm-bin", vllm, "--server", "eagle3")
    refused = run_cli(*args, env=env)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"error: server 'eagle3' needs TP × PP × DP = 8 × 1 × 1 = 8 GPUs and {UNANSWERED}: run "
        "where one of them works, or pass --gpus-unchecked to start it without the check"
    ]
    assert not (out / "eagle3").exists()  # refused before any server started
    result = run_cli(*args, "--gpus-unchecked", env=env)
    assert result.returncode == 0, result.stderr
    said = [
        line for line in (result.stdout + result.stderr).splitlines() if "GPUs unchecked" in line
    ]
    assert said == [
        f"warning: server eagle3: GPUs unchecked: {UNANSWERED}; started anyway (--gpus-unchecked)"
    ]
    recorded = json.loads((out / "manifest.json").read_text())["servers"]["eagle3"]["provenance"]
    assert recorded["gpu_inventory"] is None
    assert recorded["gpu_check"] == f"unchecked: {UNANSWERED}; started anyway (--gpus-unchecked)"
    assert str(REPO) not in recorded["gpu_check"]
