"""What a vLLM start is checked for before it spawns: its GPUs (the vendor's tool, a CPU
build, or --gpus-unchecked) and the flags its version lacks (the per-request spec-decode
metrics came in 0.29). Stand-in `vllm` and GPU tools are scripts on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpu_tools import AMD_SMI_26, stand_in

from specbench.common.errors import SpecbenchError
from specbench.launch import ServerConfig, SpeculativeConfig
from specbench.launch.capabilities import is_cpu_build, release, spec_metrics_absence
from specbench.launch.command import launch_command

EAGLE3 = ServerConfig(
    model="amd/MiniMax-M3-MXFP4",
    tensor_parallel_size=8,
    speculative=SpeculativeConfig(method="eagle3", model="org/draft", num_speculative_tokens=3),
)
SPEC_FLAG = "--per-request-spec-decode-metrics"


def fake_vllm(bin_dir: Path, version: str) -> Path:
    """A `vllm` that prints `version` for --version and nothing for `serve --help=...` (so
    its help cannot tell which flags it has)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "vllm"
    script.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo {version}\nexit 0\n')
    script.chmod(0o755)
    return script


def test_release_and_cpu_build_from_the_version() -> None:
    assert release("0.27.1") == (0, 27, 1)
    assert release("0.32.0+cpu") == (0, 32, 0)
    assert release("v0.29.0rc1") == (0, 29, 0)
    assert release("0.28.1.dev407+g7cfb97e") == (0, 28, 1)
    assert release(None) is None and release("INFO noise") is None
    assert is_cpu_build("0.32.0+cpu") and is_cpu_build("0.11.0+cpu.avx512")
    assert not is_cpu_build("0.27.1+rocm700") and not is_cpu_build("0.32.0")
    assert not is_cpu_build(None)


def test_the_spec_metrics_flag_is_left_out_before_029() -> None:
    predates = "vLLM 0.27.1 predates 0.29, the release that added it"
    assert spec_metrics_absence("0.27.1", None) == predates
    assert spec_metrics_absence("0.27.1", False) == predates
    assert spec_metrics_absence("0.28.0", None) == (
        "vLLM 0.28.0 predates 0.29, the release that added it"
    )
    # A vLLM whose help lists the flag has it, whatever its version says (a nightly).
    assert spec_metrics_absence("0.28.1.dev407+g7cfb97e", True) is None
    assert spec_metrics_absence("0.29.0", None) is None
    assert spec_metrics_absence("0.32.0+cpu", True) is None
    assert spec_metrics_absence(None, False) == "its `serve --help` lists no such flag"
    assert spec_metrics_absence(None, None) is None  # nothing known: as the suite asks


def test_a_vllm_0271_starts_without_the_flag_and_says_why(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "amd-smi", AMD_SMI_26)
    vllm = fake_vllm(bin_dir, "0.27.1")
    pinned = EAGLE3.model_copy(update={"vllm_version": "0.27.1"})
    command = launch_command(
        pinned, name="eagle3", vllm_bin=str(vllm), base_env={"PATH": str(bin_dir)}
    )
    assert SPEC_FLAG not in command.argv
    assert command.notes[0] == (
        f"left out {SPEC_FLAG}: vLLM 0.27.1 predates 0.29, the release that added it "
        "(per-category AL falls back to tokens per chunk, an estimate)"
    )
    assert command.gpu_check == (
        "8 × AMD Instinct MI355X, 294,896 MiB each, driver 6.16.6, ROCm 7.2.0 (amd-smi)"
    )
    assert not command.gpus_unchecked
    assert command.inventory is not None and command.inventory.product == "AMD Instinct MI355X"
    newer = fake_vllm(tmp_path / "newer", "0.32.0")
    command = launch_command(
        EAGLE3, name="eagle3", vllm_bin=str(newer), base_env={"PATH": str(bin_dir)}
    )
    assert command.argv[command.argv.index(SPEC_FLAG) + 1] == "summary"


def test_too_many_gpus_for_the_inventory_is_one_line(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "amd-smi", AMD_SMI_26)
    vllm = fake_vllm(bin_dir, "0.27.1")
    wide = EAGLE3.model_copy(update={"data_parallel_size": 2})
    with pytest.raises(SpecbenchError) as refused:
        launch_command(wide, name="eagle3", vllm_bin=str(vllm), base_env={"PATH": str(bin_dir)})
    assert str(refused.value) == (
        "server 'eagle3' needs TP × PP × DP = 8 × 1 × 2 = 16 GPUs, only 8 visible"
    )


def test_no_gpu_tool_refuses_a_gpu_start_unless_acknowledged(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    vllm = fake_vllm(bin_dir, "0.27.1")
    stand_in(bin_dir, "amd-smi", None)  # present, but it fails
    env = {"PATH": str(bin_dir)}
    unanswered = (
        "no GPU tool answered (amd-smi: exit 1; rocm-smi: not found; nvidia-smi: not found)"
    )
    with pytest.raises(SpecbenchError) as refused:
        launch_command(EAGLE3, name="eagle3", vllm_bin=str(vllm), base_env=env)
    assert str(refused.value) == (
        f"server 'eagle3' needs TP × PP × DP = 8 × 1 × 1 = 8 GPUs and {unanswered}: run where "
        "one of them works, or pass --gpus-unchecked to start it without the check"
    )
    command = launch_command(
        EAGLE3, name="eagle3", vllm_bin=str(vllm), base_env=env, gpus_unchecked=True
    )
    assert command.gpus_unchecked and command.inventory is None
    assert command.gpu_check == f"unchecked: {unanswered}; started anyway (--gpus-unchecked)"


def test_a_cpu_build_needs_no_gpu_tool(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    vllm = fake_vllm(bin_dir, "0.32.0+cpu")
    cpu = ServerConfig(model="tiny", baseline=True)
    command = launch_command(
        cpu, name="baseline", vllm_bin=str(vllm), base_env={"PATH": str(bin_dir)}
    )
    assert not command.gpus_unchecked
    assert command.gpu_check == (
        "none used: vLLM 0.32.0+cpu is a CPU build; no GPU tool answered (amd-smi: not found; "
        "rocm-smi: not found; nvidia-smi: not found)"
    )
    emulator = ServerConfig(engine="emulator", model="emu")
    command = launch_command(emulator, name="emu", vllm_bin=None, base_env={"PATH": str(bin_dir)})
    assert command.gpu_check is None and command.inventory is None
