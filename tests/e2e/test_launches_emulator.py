"""Launches end to end with emulator servers: each (server, launch) is a fresh process, its
cells in their own folders, and a campaign grown from 2 to 3 launches measures only the
third launch's cells."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness import run_cli, write_campaign_suite
from prometheus_client.parser import text_string_to_metric_families

from specbench.results.frame import load_results

SERVERS = ("baseline", "eagle3")


def manifest(root: Path) -> dict:
    return json.loads((root / "manifest.json").read_text())


def requests_before(cell: Path) -> float:
    """Requests the server had finished when the cell's window opened (its /metrics)."""
    text = (cell / "metrics_before.prom").read_text()
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "vllm:request_success_total"
    )


def cell_files(root: Path) -> dict[str, str]:
    """sha256 of every file in every cell folder, of every launch."""
    paths = [*root.glob("*/*/c*/r*/*"), *root.glob("*/*/c*/l*/r*/*")]
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(paths)
    }


def test_each_launch_is_a_fresh_server_and_a_third_launch_grows_the_directory(
    tmp_path: Path,
) -> None:
    suite, _ = write_campaign_suite(tmp_path, concurrency=(1,), max_tokens=16)
    out = tmp_path / "results"
    two = run_cli("run", suite, "--output", out, "--set", "launches=2")
    assert two.returncode == 0, two.stderr
    assert "4 cells measured, 0 already complete, 0 failed" in two.stdout
    # Interleaved: baseline, eagle3, baseline, eagle3; the progress says which launch.
    starting = [line for line in two.stderr.splitlines() if ": starting" in line]
    assert starting == [
        "server baseline: starting, launch 1/2",
        "server eagle3: starting, launch 1/2",
        "server baseline: starting, launch 2/2",
        "server eagle3: starting, launch 2/2",
    ]
    record = manifest(out)["launches"]
    assert (record["launches"], record["order"], record["seed"]) == (2, "interleaved", 0)
    assert record["planned"] == [list(SERVERS)] * 2
    starts = [(s["server"], s["launch"]) for s in record["starts"]]
    assert starts == [("baseline", 0), ("eagle3", 0), ("baseline", 1), ("eagle3", 1)]
    assert len({s["pid"] for s in record["starts"]}) == 4  # four processes
    # Launch 0 in the folders results had before launches; launch 1 one level down.
    summaries = sorted(str(p.parent.relative_to(out)) for p in out.rglob("summary.json"))
    assert summaries == [
        "baseline/tiny/c1/l1/r0", "baseline/tiny/c1/r0", "eagle3/tiny/c1/l1/r0", "eagle3/tiny/c1/r0"
    ]  # fmt: skip
    for server in SERVERS:
        zero, one = out / server / "tiny/c1/r0", out / server / "tiny/c1/l1/r0"
        assert json.loads((zero / "summary.json").read_text())["launch"] == 0
        assert json.loads((one / "summary.json").read_text())["launch"] == 1
        # A fresh process: the second launch's first window opens after its own warmup only
        # (1 request + the first cell's 8 extra), as the first launch's did.
        assert requests_before(one) == requests_before(zero) > 0
    first_hash = manifest(out)["suite_hash"]
    before = cell_files(out)
    assert len(before) == 4 * 5  # summary, requests, two scrapes, window samples per cell

    three = run_cli("run", suite, "--output", out, "--set", "launches=3")
    assert three.returncode == 0, three.stderr
    assert "2 cells measured, 4 already complete, 0 failed" in three.stdout
    grown = manifest(out)
    assert grown["runs"][-1]["cells_measured"] == ["baseline/tiny/c1/l2/r0", "eagle3/tiny/c1/l2/r0"]
    assert grown["suite_hash"] == first_hash  # one campaign, grown by a launch
    assert [(s["server"], s["launch"]) for s in grown["launches"]["starts"][4:]] == [
        ("baseline", 2),
        ("eagle3", 2),
    ]
    after = cell_files(out)
    assert {path: after[path] for path in before} == before  # earlier launches untouched
    frame = load_results([out])
    assert sorted(frame.groupby("label")["launch"].apply(sorted).to_dict().items()) == [
        ("baseline", [0, 1, 2]),
        ("eagle3", [0, 1, 2]),
    ]
