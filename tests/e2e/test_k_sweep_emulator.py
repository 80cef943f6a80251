"""A K sweep end to end with emulator servers: `[1, 2]` measures a server per K against the
baseline, and the list grown to `[1, 2, 3]` measures only the new K's cells, the earlier
ones untouched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness import run_cli, write_campaign_suite

K_SET = "servers.eagle3.num_speculative_tokens"


def cell_files(root: Path) -> dict[str, str]:
    """sha256 of every file in every cell folder."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.glob("*/*/c*/r*/*"))
    }


def summary(root: Path, key: str) -> dict:
    return json.loads((root / key / "summary.json").read_text())


def test_a_sweep_measures_each_k_and_a_grown_list_measures_only_the_new_k(
    tmp_path: Path,
) -> None:
    # The eagle3 server's conditional acceptance is (0.8, 0.75, 0.7): each K takes its first K.
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1, 4), max_tokens=16)
    out = tmp_path / "results"
    first = run_cli("run", suite, "--output", out, "--set", f"{K_SET}=[1, 2]")
    assert first.returncode == 0, first.stderr
    assert "6 cells measured, 0 already complete, 0 failed" in first.stdout
    starting = [line for line in first.stderr.splitlines() if ": starting" in line]
    assert starting == [
        "server baseline: starting",
        "server eagle3-k1: starting",
        "server eagle3-k2: starting",
    ]
    for k in (1, 2):
        for c in (1, 4):
            spec = summary(out, f"eagle3-k{k}/tiny/c{c}/r0")["spec_decode"]
            # The server drafted exactly K tokens at every verification step.
            assert spec["num_draft_tokens"] == k * spec["num_drafts"] > 0
            assert len(spec["per_position_acceptance"]) == k
            assert 1 < spec["acceptance_length"] <= 1 + k
    assert summary(out, "baseline/tiny/c1/r0")["spec_decode"] is None
    before = cell_files(out)
    assert len(before) == 6 * 5  # 6 cells of 5 files each (window_samples.jsonl the fifth)
    assert len({path.split("/")[0] for path in before}) == 3

    # The dry run of the grown list: the first Ks complete, the new one to measure.
    dry = run_cli("run", suite, "--output", out, "--dry-run", "--set", f"{K_SET}=[1, 2, 3]")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0].endswith(
        f"8 of its 8 cells selected; 6 already complete in {out}; 2 to measure"
    )
    assert (
        "K sweep: eagle3 \u2192 eagle3-k1, eagle3-k2, eagle3-k3 (K = 1, 2, 3) against baseline "
        "(K = 0)"
    ) in lines
    assert "  eagle3-k3/tiny/c1/r0" in lines and "  eagle3-k2/tiny/c4/r0 (complete)" in lines

    grown = run_cli("run", suite, "--output", out, "--set", f"{K_SET}=[1, 2, 3]")
    assert grown.returncode == 0, grown.stderr
    assert "2 cells measured, 6 already complete, 0 failed" in grown.stdout
    assert [line for line in grown.stderr.splitlines() if ": starting" in line] == [
        "server eagle3-k3: starting"
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runs"][-1]["cells_measured"] == [
        "eagle3-k3/tiny/c1/r0",
        "eagle3-k3/tiny/c4/r0",
    ]
    assert manifest["suite"]["k_sweeps"] == {"eagle3": ["eagle3-k1", "eagle3-k2", "eagle3-k3"]}
    assert manifest["retired_servers"] == {}  # no earlier K left the suite
    after = cell_files(out)
    assert {path: after[path] for path in before} == before  # the first Ks untouched
    for c in (1, 4):
        spec = summary(out, f"eagle3-k3/tiny/c{c}/r0")["spec_decode"]
        assert spec["num_draft_tokens"] == 3 * spec["num_drafts"] > 0
        assert len(spec["per_position_acceptance"]) == 3
