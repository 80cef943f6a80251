"""On real emulator results: the dry run prices only the cells still to measure, from
`--estimate-from` and from the cells `--output` already holds; `status` on a local results
directory counts its cells per server and workload and shows its last run."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from harness import run_cli, server_pids, write_campaign_suite

#: A third server whose interpreter cannot start: its first cell fails, the rest are not run.
BROKEN = """
[servers.broken]
speculative = { method = "eagle3", model = "draft", num_speculative_tokens = 3 }
env = { PYTHONHOME = "/nonexistent" }
"""
COST_LINE = re.compile(r"^  (\S+/\S+/c\d+/r\d+): (\d+) conversations, ([0-9.]+) s, ", re.MULTILINE)


def run(*args: str | Path) -> str:
    result = run_cli("run", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def priced(stdout: str) -> dict[str, tuple[int, float]]:
    """Cell key → (conversations, seconds) of the cost estimate's cell lines."""
    return {key: (int(n), float(s)) for key, n, s in COST_LINE.findall(stdout)}


def total_s(stdout: str) -> float:
    match = re.search(r"^  total: ([0-9.]+) s, [0-9.]+ GPU-h$", stdout, re.MULTILINE)
    assert match, stdout
    return float(match[1])


def test_the_dry_run_prices_only_the_cells_still_to_measure(tmp_path: Path) -> None:
    suite, tag = write_campaign_suite(tmp_path)
    earlier, out = tmp_path / "earlier", tmp_path / "out"
    run(suite, "--output", earlier)  # every cell: 2 servers × c1, c4
    run(suite, "--output", out, "--server", "baseline")
    recorded = json.loads((earlier / "manifest.json").read_text())
    (eagle3,) = [s for s in recorded["runs"][-1]["cost"]["servers"] if s["server"] == "eagle3"]
    startup_s = recorded["servers"]["eagle3"]["provenance"]["startup_s"]
    conversations = recorded["workloads"]["tiny"]["num_conversations"]
    assert conversations == 12

    # --output holds the suite's baseline cells only: nothing there prices eagle3's.
    alone = run(suite, "--output", out, "--dry-run")
    assert f"4 of its 4 cells selected; 2 already complete in {out}; 2 to measure" in alone
    assert alone.splitlines()[-1] == (
        f"cost: cannot estimate the 2 cells to measure from earlier results in {out}: no "
        "earlier cell of server eagle3 on workload tiny (`specbench estimate SUITE --from "
        "DIR` fits earlier results of them; `--pilot` measures a few conversations)"
    )

    # With earlier results: the 2 cells to measure, each as its like took there (all the
    # conversations: its window and drain) plus the mean overhead of eagle3's earlier cells.
    dry = run(suite, "--output", out, "--dry-run", "--estimate-from", earlier)
    assert f"cost estimate (wall s, GPU-h; fitted on earlier results and those in {out}):" in dry
    cells = priced(dry)
    assert sorted(cells) == ["eagle3/tiny/c1/r0", "eagle3/tiny/c4/r0"]
    durations = {
        key: json.loads((earlier / key / "summary.json").read_text())["duration_s"] for key in cells
    }
    overhead = sum(eagle3["cell_wall_s"][key] - durations[key] for key in cells) / len(cells)
    assert overhead > 0
    for key, (n, seconds) in cells.items():
        assert n == conversations
        assert seconds == pytest.approx(durations[key] + overhead, abs=0.051)
    assert "server baseline:" not in dry  # nothing of it to measure: no start paid
    assert f"  server eagle3: start {startup_s:.1f} s, total " in dry
    # Before, the total priced the 2 baseline cells already in --output too.
    expected = startup_s + sum(eagle3["cell_wall_s"].values())
    assert total_s(dry) == pytest.approx(expected, abs=0.051)

    # --force measures (and prices) every cell again.
    forced = run(suite, "--output", out, "--dry-run", "--estimate-from", earlier, "--force")
    assert len(priced(forced)) == 4

    # Every cell complete: nothing to measure, nothing to pay.
    done = run(suite, "--output", earlier, "--dry-run")
    assert f"cost estimate (wall s, GPU-h; fitted on earlier results in {earlier}):" in done
    assert done.splitlines()[-2:] == [
        "  total: 0.0 s, 0.0000 GPU-h",
        "  nothing to measure: every selected cell is complete",
    ]
    assert server_pids(tag) == []  # dry runs start nothing


def test_status_counts_a_local_directorys_cells_and_shows_its_last_run(tmp_path: Path) -> None:
    suite, tag = write_campaign_suite(tmp_path, servers_extra=BROKEN)
    out = tmp_path / "out"
    run(suite, "--output", out, "--server", "baseline")
    broken = run_cli("run", suite, "--output", out, "--server", "broken")
    assert broken.returncode == 3, broken.stderr  # the server would not start
    assert server_pids(tag) == []

    status = run_cli("status", out)
    assert status.returncode == 0, status.stderr
    rows = [
        line.strip("│ ").split()
        for line in status.stdout.splitlines()
        if line.startswith("│") and "│ server" not in line
    ]
    # server, workload, complete, failed, missing, cells
    assert [row[::2] for row in rows] == [
        ["baseline", "tiny", "2", "0", "0", "2"],
        ["broken", "tiny", "0", "1", "1", "2"],
        ["eagle3", "tiny", "0", "0", "2", "2"],
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    last = manifest["runs"][-1]
    assert last["host"] == socket.gethostname()
    lines = status.stdout.splitlines()
    assert lines[-3] == (
        f"last run (2 recorded): run on {last['host']}, started {last['started_at']}, ended "
        f"{last['finished_at']}; server not started: 0 cells measured, 1 failed, 1 not run"
    )
    assert lines[-2].startswith("  command line: ")
    assert lines[-2].endswith(f"run {suite} --output {out} --server broken")
    assert lines[-1] == (
        f"2/6 cells complete, 1 failed, 3 missing; `specbench run SUITE --output {out}` "
        "measures the 4"
    )
    assert "Slurm" not in status.stdout + status.stderr


def test_status_of_a_directory_that_is_not_results_is_one_line(tmp_path: Path) -> None:
    status = run_cli("status", tmp_path)
    assert status.returncode == 2
    assert status.stderr.strip().splitlines() == [
        f"error: {tmp_path}: no manifest.json; not a results directory written by specbench "
        "run or bench"
    ]
