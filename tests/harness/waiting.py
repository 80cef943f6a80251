"""Waiting for a condition, and what a results folder holds while a campaign runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def wait_until(condition: Callable[[], object], timeout_s: float = 120.0) -> bool:
    """Poll `condition` every 20 ms; whether it held within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def wait_for(condition: Callable[[], object], timeout_s: float = 120.0) -> None:
    """`wait_until`, failing the test (AssertionError) when the condition never held."""
    assert wait_until(condition, timeout_s), "timed out"


def summary_paths(root: Path) -> list[Path]:
    return sorted(root.rglob("summary.json"))


def summary_bytes(root: Path) -> dict[Path, bytes]:
    """Every summary.json below `root` and its bytes: completed cells, to compare later."""
    return {p: p.read_bytes() for p in summary_paths(root)}


def in_flight(out: Path) -> list[Path]:
    """Cells whose requests.jsonl has records but which have no summary yet."""
    return [
        p.parent
        for p in out.rglob("requests.jsonl")
        if p.stat().st_size > 0 and not (p.parent / "summary.json").exists()
    ]
