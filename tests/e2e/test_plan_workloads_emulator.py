"""Several workloads on one dataset: each gets its own cells, tables never mix them.

A suite with a concurrency point, the same point at another output cap, and a 2-category
subset, all on one dataset, run against real emulator processes through the real CLI.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

from harness import DATA, run_cli, suite_toml

from specbench.analysis import table_data as D
from specbench.results import columns as C
from specbench.results import frame as F


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)


def write_suite(tmp_path: Path, workloads: str) -> Path:
    tag = uuid.uuid4().hex[:10]
    suite = tmp_path / "suite.toml"
    suite.write_text(
        suite_toml(
            name=f"workloads-{tag}",
            model=f"emu-{tag}",
            timings="prefill_ms = 1.0, step_ms = 0.5, seed = 5",
            repeats=None,
            workloads=workloads,
        )
    )
    return suite


WORKLOADS = f"""
[[workloads]]
dataset = "{DATA}"
concurrency = [2]
max_tokens = 16

[[workloads]]
dataset = "{DATA}"
concurrency = [2]
max_tokens = 48

[[workloads]]
dataset = "{DATA}"
categories = ["code", "math"]
concurrency = [2]
max_tokens = 16
"""


def test_workloads_on_one_dataset_are_measured_and_reported_apart(tmp_path):
    suite = write_suite(tmp_path, WORKLOADS)
    out = tmp_path / "results"
    result = cli("run", suite, "--output", out)
    assert result.returncode == 0, result.stderr
    assert "6 cells measured, 0 already complete, 0 failed" in result.stdout
    folders = sorted(p.parent.parent.parent.name for p in (out / "eagle3").rglob("summary.json"))
    assert folders == ["tiny+code+math", "tiny+max_tokens-16", "tiny+max_tokens-48"]
    caps = {
        folder: json.loads((out / "eagle3" / folder / "c2" / "r0" / "summary.json").read_text())[
            "max_tokens"
        ]
        for folder in folders
    }
    assert caps == {"tiny+code+math": 16, "tiny+max_tokens-16": 16, "tiny+max_tokens-48": 48}

    # A rerun skips all six: no workload reads another's cells as "already complete".
    again = cli("run", suite, "--output", out)
    assert again.returncode == 0, again.stderr
    assert "0 cells measured, 6 already complete" in again.stdout

    frame = F.load_results([out])
    groups = sorted(set(frame[C.GROUP]))
    assert groups == [f"{DATA} · max_tokens=16", f"{DATA} · max_tokens=48"]
    # Overall of the 16-token group comes from its whole-dataset cell only: the
    # 2-category subset (same cap, same group) does not move it.
    categories = F.load_category_results([out])
    domain = D.domain_data(frame, categories, groups[0], ["eagle3"]).set_index(C.CATEGORY)
    whole = frame[(frame[C.WORKLOAD] == "tiny+max_tokens-16") & (frame[C.LABEL] == "eagle3")]
    accepted, drafts = int(whole[C.NUM_ACCEPTED_TOKENS].iloc[0]), int(whole[C.NUM_DRAFTS].iloc[0])
    assert domain.loc[D.OVERALL, C.ACCEPTANCE_LENGTH] == 1 + accepted / drafts
    assert domain.loc[D.OVERALL, D.CONCURRENCIES] == [2]

    report = cli("report", out)
    assert report.returncode == 0, report.stderr
    text = (out / "report" / "report.md").read_text()
    assert "max_tokens=16" in text and "max_tokens=48" in text


def test_workloads_that_would_share_cells_are_refused(tmp_path):
    twins = f"""
[[workloads]]
dataset = "{DATA}"
concurrency = [1, 2]
max_tokens = 16

[[workloads]]
dataset = "{DATA}"
concurrency = [2, 4]
max_tokens = 16
"""
    result = cli("run", write_suite(tmp_path, twins), "--output", tmp_path / "r")
    assert result.returncode == 2
    assert "workloads 0 and 1 would share the results folder 'tiny'" in result.stderr
    assert "Traceback" not in result.stderr
    unknown = cli("run", write_suite(tmp_path, twins.replace("max_tokens = 16", "max_tokns = 1")))
    assert unknown.returncode == 2
    assert "workloads[0].max_tokns: unknown key" in unknown.stderr
