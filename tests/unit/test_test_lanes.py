"""`make test`'s lanes (tools/test_lanes.sh), run with a stand-in pytest that prints its
arguments: every end-to-end test file is in exactly one of the emulator lanes, the real
vLLM and Slurm lanes select by marker, the unit lane leaves tests/e2e out."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lane_arguments(tmp_path: Path) -> dict[str, list[str]]:
    fake = tmp_path / "pytest"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do echo "ARG $a"; done\n')
    fake.chmod(0o755)
    done = subprocess.run(
        ["sh", "tools/test_lanes.sh", str(tmp_path / "logs"), str(fake), "--extra"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lanes = {}
    for log in (tmp_path / "logs").glob("*.log"):
        lines = log.read_text().splitlines()
        lanes[log.stem] = [x.removeprefix("ARG ") for x in lines if x.startswith("ARG ")]
    return lanes


def test_every_e2e_file_runs_in_exactly_one_emulator_lane(tmp_path: Path) -> None:
    lanes = lane_arguments(tmp_path)
    assert sorted(lanes) == ["e2e-a", "e2e-b", "e2e-c", "quiet", "slurm", "unit", "vllm"]
    for name, args in lanes.items():
        assert args[:4] == ["-q", "-ra", "--durations=20", "-m"], name
        assert args[-1] == "--extra", name  # make coverage's --cov reaches every lane
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "e2e").glob("test_*.py"))
    given = [a for n in ("e2e-a", "e2e-b", "e2e-c") for a in lanes[n] if a.endswith(".py")]
    assert sorted(given) == files  # each once, none left out
    for name in ("e2e-a", "e2e-b", "e2e-c"):
        assert lanes[name][4] == "not vllm and not slurm and not quiet"
    assert lanes["vllm"][4:] == ["vllm", "--extra"]
    assert lanes["slurm"][4:] == ["slurm", "--extra"]
    assert lanes["unit"][4:] == [
        "not vllm and not slurm and not quiet",
        "--ignore=tests/e2e",
        "--extra",
    ]
    assert lanes["quiet"][4:] == ["quiet", "tests", "--extra"]
    # The gate's tests come last in their lane (after the vLLM lane's demo start).
    b = [a for a in lanes["e2e-b"] if a.endswith(".py")]
    assert all("test_gate" in a for a in b[-2:]) and not any("test_gate" in a for a in b[:-2])
