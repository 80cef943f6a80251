"""tools/gpu_energy_check.py as a user runs it (a subprocess), with pynvml, amdsmi and torch
stood in by module files on its PYTHONPATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from stand_ins import BROKEN_IMPORT, write_pynvml

REPO = Path(__file__).resolve().parents[3]
TOOL = REPO / "tools" / "gpu_energy_check.py"
NO_TORCH = 'raise ImportError("stand-in: no torch on this machine")\n'


def run_tool(libraries: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(libraries), str(REPO)])}
    return subprocess.run(
        [sys.executable, str(TOOL), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.fixture
def libraries(tmp_path: Path) -> Path:
    """One stood-in H100 drawing a steady 312.5 W, and no torch."""
    folder = tmp_path / "libraries"
    write_pynvml(folder, [{"watts": 312.5, "uuid": "GPU-5a3c1d2e"}])
    (folder / "torch.py").write_text(NO_TORCH)
    return folder


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--source", "rocm", "--gpu", "0"],
            "gpu_energy_check: --source: 'rocm' is not one of auto, off, amdsmi, nvml or an "
            "exporter URL http(s)://host:port[/path]",
        ),
        (
            ["--source", "nvml", "--gpu", "3"],
            "gpu_energy_check: --gpu 3: NVML lists 1 GPU(s) (numbered 0-0); it has no GPU '3'",
        ),
        (
            ["--source", "nvml", "--gpu", "0", "--seconds", "0"],
            "gpu_energy_check: argument --seconds: '0': seconds must be more than 0",
        ),
        (
            ["--source", "nvml", "--gpu", "0", "--load", "fire"],
            "gpu_energy_check: argument --load: invalid choice: 'fire' (choose from "
            "'matmul', 'none')",
        ),
        (["--gpu", "0"], "gpu_energy_check: the following arguments are required: --source"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(libraries: Path, args: list[str], line: str) -> None:
    done = run_tool(libraries, *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n")


def test_a_library_that_does_not_import_is_one_line_and_exit_2(libraries: Path) -> None:
    (libraries / "amdsmi.py").write_text(BROKEN_IMPORT)
    done = run_tool(libraries, "--source", "amdsmi", "--gpu", "0")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(
        "gpu_energy_check: --source amdsmi: amdsmi does not import (libamd_smi.so: "
    )
    assert "pip install 'specbench[amd]'" in done.stderr


def test_without_torch_it_says_so_and_measures_the_idle_window(libraries: Path) -> None:
    done = run_tool(libraries, "--source", "nvml", "--gpu", "0", "--idle-seconds", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "source nvml, GPU 0: power sampled every 0.1 s"
    assert lines[2] == (
        "torch is not installed (stand-in: no torch on this machine): measuring the idle "
        "window only"
    )
    assert len(lines) == 3
    assert_window(lines[1], "idle", 1.0)


def test_with_a_load_of_its_own_both_windows_agree_with_power(libraries: Path) -> None:
    done = run_tool(
        libraries, "--source", "nvml", "--gpu", "GPU-5a3c1d2e", "--seconds", "1.5",
        "--idle-seconds", "1", "--load", "none",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "source nvml, GPU GPU-5a3c1d2e: power sampled every 0.1 s"
    assert_window(lines[1], "idle", 1.0)
    assert lines[2] == "load: none of its own (run yours now)"
    assert_window(lines[3], "loaded", 1.5)
    assert re.fullmatch(r"idle 312\.[4-6] W, loaded 312\.[4-6] W \([+-]0\.[0-2] W\)", lines[4])
    assert len(lines) == 5


def assert_window(line: str, name: str, seconds: float) -> None:
    """A window's line: 10 samples a second; the stand-in's counter grows at exactly its
    312.5 W, so the counter and the sampled power agree to the counter's 1 mJ step."""
    found = re.fullmatch(
        rf"{name} +([\d.]+) s +(\d+) samples  counter +([\d.]+) J  sampled +([\d.]+) J  "
        r"ratio ([\d.]+)  mean +([\d.]+) W",
        line,
    )
    assert found, line
    window_s, samples, counter, sampled, ratio, watts = map(float, found.groups())
    assert seconds <= window_s < seconds + 0.5
    assert samples >= 10 * seconds - 2
    assert counter == pytest.approx(312.5 * window_s, rel=0.01)
    assert sampled == pytest.approx(312.5 * window_s, rel=0.01)
    assert ratio == pytest.approx(1.0, abs=0.002)
    assert watts == pytest.approx(312.5, abs=1.0)
