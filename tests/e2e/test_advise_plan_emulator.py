"""`specbench advise --plan` end to end on emulator servers that price K (issue 40,
requirement 8): a coarse sweep K ∈ {1, 3} with the baseline at c = 1 and 4 (the truth of
test_advise_emulator: K 3 best at c = 1, the baseline at c = 4); the plan adds only K 2 at
c = 1 (K 3 sits at the top of the list), `run --plan` measures exactly those cells into the
same results directory, and the next plan says nothing is left. A plan run with another
suite or into another directory is one line and exit 2."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from harness import one_line, run_cli, write_campaign_suite
from test_advise_emulator import K_SET, LOOSE, PRICED, sets

#: `make test` runs these alone, last: the plan's picks compare throughput between
#: configs measured minutes apart. Beside six xdist workers on two cores, one launch of a
#: cell ran so much slower than its others that the tie rule, rightly, could not tell
#: K 3 from K 1 at c = 1, though K 3 leads by 29% in the steady state.
pytestmark = pytest.mark.quiet


@pytest.fixture(scope="module")
def coarse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The suite and its results: K = 1, 3 and the baseline at c = 1 and 4, 3 launches."""
    folder = tmp_path_factory.mktemp("plan")
    suite, _ = write_campaign_suite(folder, concurrency=(1, 4), max_tokens=32)
    out = folder / "results"
    ran = run_cli("run", suite, "--output", out, *sets(f"{K_SET}=[1, 3]", "launches=3", *PRICED))
    assert ran.returncode == 0, ran.stderr
    assert "18 cells measured" in ran.stdout
    return suite, out


def test_the_plan_measures_only_the_neighbour_it_names_and_then_nothing_is_left(
    coarse: tuple[Path, Path], tmp_path: Path
) -> None:
    suite, out = coarse
    plan_path = tmp_path / "plan.json"
    planned = run_cli("advise", out, *LOOSE, "--plan", "--write", plan_path)
    assert planned.returncode == 0, planned.stderr
    lines = planned.stdout.splitlines()
    assert lines[0] == (
        "c=1: best K 3 (K 0, 1, 3 measured; K 3 is the largest allowed (--max-k 3)): "
        "add K 2 to bracket it"
    )
    assert lines[1].startswith("c=4: best K 0, bracketed by K 1: +") and lines[1].endswith(
        "over K 1: resolved"
    )
    assert lines[2] == "1 point to measure; eagle3's K list grows to [1, 2, 3]"
    assert lines[3] == f"measure them: specbench run {suite} --output {out} --plan {plan_path}"
    plan = json.loads(plan_path.read_text())
    assert plan == {
        "suite": plan["suite"],
        "results": str(out.resolve()),
        "sweep": "eagle3",
        "k": [1, 2, 3],
        "launches": None,
        "cells": [{"server": "eagle3-k2", "workload": "tiny", "concurrency": 1}],
    }
    assert json.loads(run_cli("advise", out, *LOOSE, "--plan", "--json").stdout) == plan

    # The run's own --set of the suite (priced emulator, launches) is given again; the plan
    # adds the grown K list and the cells.
    grown = run_cli(
        "run", suite, "--plan", plan_path, *sets("launches=3", *PRICED), "--output", out
    )
    assert grown.returncode == 0, grown.stderr
    assert "3 cells measured, 0 already complete, 0 failed" in grown.stdout
    assert [line for line in grown.stderr.splitlines() if ": starting" in line] == [
        f"server eagle3-k2: starting, launch {launch}/3" for launch in (1, 2, 3)
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["runs"][-1]["cells_measured"]) == [
        "eagle3-k2/tiny/c1/l1/r0",
        "eagle3-k2/tiny/c1/l2/r0",
        "eagle3-k2/tiny/c1/r0",
    ]
    assert manifest["suite"]["k_sweeps"] == {"eagle3": ["eagle3-k1", "eagle3-k2", "eagle3-k3"]}

    # The partial grid (K 2 at c = 1 only) still advises, the truth's K at each load.
    advised = run_cli("advise", out, "--json", "--objective", "throughput", *LOOSE)
    assert advised.returncode == 0, advised.stderr
    picks = {r["concurrency"]: r for r in json.loads(advised.stdout)["recommendations"]}
    assert {c: r["k"] for c, r in picks.items()} == {1: 3, 4: 0}
    assert picks[1]["best_single_k"] in (1, 3)  # K 2 was not measured at c = 4
    again = run_cli("advise", out, *LOOSE, "--plan", "--write", tmp_path / "next.json")
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0].startswith("c=1: best K 3, bracketed by K 2; K 3 is the largest allowed")
    assert lines[0].endswith("over K 2: resolved")
    assert lines[-1] == "Nothing left: every pick is bracketed and resolved"
    assert not (tmp_path / "next.json").exists()


def test_a_plan_run_with_another_suite_or_directory_is_refused(
    coarse: tuple[Path, Path], tmp_path: Path
) -> None:
    # Written here, not by advise: the other test may have left nothing to plan.
    suite, out = coarse
    plan = {
        "suite": tomllib.loads(suite.read_text())["name"],
        "results": str(out.resolve()),
        "sweep": "eagle3",
        "k": [1, 2, 3],
        "launches": None,
        "cells": [{"server": "eagle3-k2", "workload": "tiny", "concurrency": 4}],
    }
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan))
    other, _ = write_campaign_suite(tmp_path, concurrency=(1, 4))
    refused = run_cli("run", other, "--plan", plan_path, "--output", out)
    assert refused.returncode == 2
    assert one_line(refused.stderr) == "error: " + (
        f"--plan {plan_path}: a plan of suite {plan['suite']!r}, not of "
        f"{tomllib.loads(other.read_text())['name']!r} ({other}); plan this suite's results "
        "with specbench advise --plan"
    )
    elsewhere = run_cli("run", suite, "--plan", plan_path, "--output", tmp_path / "x")
    assert elsewhere.returncode == 2
    assert one_line(elsewhere.stderr) == "error: " + (
        f"--plan {plan_path}: a plan of the results in {out.resolve()}, not of --output "
        f"{tmp_path / 'x'}; a plan grows the directory it was made from"
    )
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**plan, "cells": [{"server": "eagle3-k2"}]}))
    bad = run_cli("run", suite, "--plan", broken)
    assert bad.returncode == 2
    assert one_line(bad.stderr) == (
        f"error: {broken}: cells[0].workload: required but missing (+1 more)"
    )
    assert not (tmp_path / "x").exists()
    misuse = run_cli("advise", out, "--write", plan_path)
    assert misuse.returncode == 2 and one_line(misuse.stderr).endswith("--write: only with --plan")
