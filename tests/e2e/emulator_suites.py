"""Helpers of the emulator e2e tests: campaign suites, their servers in /proc, CLI runs, waiting.

The suite TOML and prompt datasets come from tools/emulator_suite.py (on the tests'
pythonpath), which tools/gate_noise_experiment.py shares.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from emulator_suite import campaign_timings, suite_toml, workload
from helpers import REPO, run_cli

#: 12 conversations, 14 turns (tests/fixtures/custom).
DATA = REPO / "tests" / "fixtures" / "custom" / "tiny.jsonl"


def write_campaign_suite(
    folder: Path,
    *,
    step_ms: float = 1.0,
    concurrency: Sequence[int] = (1, 4),
    max_tokens: int = 32,
    env: str = "",
) -> tuple[Path, str]:
    """folder/suite.toml: baseline and eagle3 on DATA; (its path, its served model name)."""
    tag = uuid.uuid4().hex[:10]  # unique served model name: finds this test's servers in `ps`
    suite = folder / "suite.toml"
    suite.write_text(
        suite_toml(
            name=f"emu-{tag}",
            model=f"emu-{tag}",
            timings=campaign_timings(step_ms),
            target_extra=env,
            workloads=workload(DATA, concurrency, max_tokens),
        )
    )
    return suite, f"emu-{tag}"


def run_suite(suite: Path, out: Path, *overrides: str) -> Path:
    """Run the eagle3 server of the suite into `out` (the non-speculative one is not gated)."""
    sets = [arg for override in overrides for arg in ("--set", override)]
    result = run_cli("run", suite, "--output", out, "--server", "eagle3", *sets)
    assert result.returncode == 0, result.stderr
    return out


def server_pids(tag: str) -> list[int]:
    """PIDs of live (not zombie) emulator processes serving this test's unique model name."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if "emulate" in cmdline and tag in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


def summary_paths(root: Path) -> list[Path]:
    return sorted(root.rglob("summary.json"))


def summary_bytes(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in summary_paths(root)}


def in_flight(out: Path) -> list[Path]:
    """Cells whose requests.jsonl has records but which have no summary yet."""
    return [
        p.parent
        for p in out.rglob("requests.jsonl")
        if p.stat().st_size > 0 and not (p.parent / "summary.json").exists()
    ]


def wait_for(condition: Callable[[], object], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def one_line(stderr: str) -> str:
    """The last non-blank line of an error output."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines, "no message"
    return lines[-1]
