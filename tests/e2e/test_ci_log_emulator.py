"""`run … > log 2>&1` as CI runs it: one line per finished cell, heartbeats, no blank lines.

A live bar redrawn in place is meaningless in a log file (it left a blank line per cell and
the campaign bar once at the end); when stderr is not a terminal the run logs instead.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from harness import run_cli, write_campaign_suite

CELL = re.compile(
    r"^cell (\d)/4 (\w+)/tiny/c(\d)/r0: (\d+) requests \(0 failed\), [\d,.]+ tok/s/\w+"
    r"(, AL \d\.\d\d)?, [^;]+; campaign [^,]+, (eta .+|done)$"
)


def test_a_logged_campaign_has_a_line_per_cell_and_heartbeats(tmp_path: Path) -> None:
    # 20 ms steps: a cell lasts a few seconds, so a 1 s heartbeat must show in each.
    suite, _ = write_campaign_suite(tmp_path, step_ms=20.0)
    out = tmp_path / "results"
    done = run_cli("run", suite, "--output", out, env={**os.environ, "SPECBENCH_HEARTBEAT_S": "1"})
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "" not in lines
    cells = [match for match in map(CELL.match, lines) if match]
    assert [(m[1], m[2], m[3]) for m in cells] == [
        ("1", "baseline", "1"),
        ("2", "baseline", "4"),
        ("3", "eagle3", "1"),
        ("4", "eagle3", "4"),
    ]
    assert [bool(m[5]) for m in cells] == [False, False, True, True]  # AL where it speculates
    assert [m[6] == "done" for m in cells] == [False, False, False, True]
    beats = [line for line in lines if line.startswith("... ")]
    assert beats and all(re.search(r"/tiny/c\d/r0: \d+/\d+ conversations, ", b) for b in beats)
    again = run_cli("run", suite, "--output", out)
    assert again.stderr.count("already complete") == 4 and "cell " not in again.stderr
