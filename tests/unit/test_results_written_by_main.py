"""A results directory written by main's code at 408c852 stays readable, hash-identical and
resumable: the guard of every restructuring after it (tests/fixtures/runs/README.md says how
it was recorded).

Its suite (`suite.toml`) ran two emulator servers (a baseline and an EAGLE3 speculator) over
two workloads: 6 cells. The datasets were at /tmp/specbench-408c852/ then and are not there
now: a complete cell is never loaded again, and neither resume nor report reads a dataset.
`report-tables.json` is what main's `report` printed for it (each table's title, columns
and rows, and what it did not build).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from harness import REPO, run_cli

from specbench.results.frame import load_results
from specbench.results.loading import load_cells
from specbench.run.cells import cell_directory
from specbench.run.plan import drop_neutral_server_fields, resolved_suite, suite_hash
from specbench.run.resume import recorded_workload
from specbench.store.layout import is_complete
from specbench.store.manifest import read_manifest
from specbench.suite.load import load_suite
from specbench.suite.model import workload_keys

RECORDED = REPO / "tests" / "fixtures" / "runs" / "main-408c852"
SUITE = RECORDED / "suite.toml"
RESULTS = RECORDED / "results"
#: What main's suite measured, in its order of cells.
CELLS = [
    "baseline/conversations/c1/r0",
    "baseline/conversations/c2/r0",
    "baseline/prompts/c2/r0",
    "eagle3/conversations/c1/r0",
    "eagle3/conversations/c2/r0",
    "eagle3/prompts/c2/r0",
]


#: What every write of the manifest stamps: the code that wrote it last.
STAMPS = ("git_sha", "python", "specbench_version")


def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under `root` but the run's locks and the manifest."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.name.endswith(".lock") and path.name != "manifest.json"
    }


def unstamped_manifest(root: Path) -> dict[str, object]:
    """The manifest without `STAMPS`."""
    manifest = json.loads((root / "manifest.json").read_text())
    return {name: value for name, value in manifest.items() if name not in STAMPS}


def test_todays_code_hashes_the_suite_and_keys_the_cells_as_main_recorded() -> None:
    suite = load_suite(SUITE)
    manifest = read_manifest(RESULTS)
    assert manifest is not None
    assert manifest.git_sha == "408c852830d7ed1b9201a7ee8fef4f56ee0d362d"
    assert suite_hash(suite) == manifest.suite_hash
    assert manifest.suite_hash == "b9b0f2478fd3b89cf11a0cbfbcd03f6f614b1e3ceb5247773feb6c4360438bc1"
    assert [cell.key for cell in suite.expand()] == CELLS
    assert manifest.runs[-1].cells_measured == CELLS
    folders = sorted(str(p.parent.relative_to(RESULTS)) for p in RESULTS.rglob("summary.json"))
    assert folders == CELLS
    # The records `run` compares a rerun with: each workload and server, field by field.
    keys = workload_keys(suite.workloads)
    assert keys == ["conversations", "prompts"] == list(manifest.workloads)
    for key, workload in zip(keys, suite.workloads, strict=True):
        assert recorded_workload(workload) == manifest.workloads[key].spec
    recorded_servers = (manifest.suite or {})["servers"]
    assert list(recorded_servers) == ["baseline", "eagle3"]
    for name, recorded in recorded_servers.items():
        drop_neutral_server_fields(recorded)
        assert recorded == resolved_suite(suite, redact=False)["servers"][name]


def test_the_results_load_with_every_figure_main_wrote() -> None:
    cells, failed = load_cells([RESULTS])
    assert failed == []
    by_key = {str(cell.path.parent.relative_to(RESULTS)): cell for cell in cells}
    assert sorted(by_key) == CELLS
    for key, cell in by_key.items():
        raw = json.loads((RESULTS / key / "summary.json").read_text())
        assert cell.label == key.split("/")[0]
        assert cell.is_baseline == (cell.label == "baseline")
        assert cell.summary.output_tok_s_per_gpu == raw["output_tok_s_per_gpu"]
        assert cell.summary.num_requests == raw["num_requests"] > 0
        assert cell.summary.ttft_ms.median == raw["ttft_ms"]["median"]
        if cell.label == "eagle3":
            assert cell.summary.spec_decode is not None
            assert (
                cell.summary.spec_decode.acceptance_length
                == raw["spec_decode"]["acceptance_length"]
            )
    frame = load_results([RESULTS])
    assert len(frame) == 6
    rows = frame.set_index(["label", "workload", "concurrency"])
    assert (
        rows.loc[("eagle3", "conversations", 2), "acceptance_length"]
        == (
            json.loads((RESULTS / "eagle3/conversations/c2/r0/summary.json").read_text())[
                "spec_decode"
            ]["acceptance_length"]
        )
    )


#: Titles and columns renamed on purpose since main (old → new), by issue 42's one name per
#: AL definition: main's AL by position came from streamed chunks, now titled so; the GQA
#: layout's column says it is the step-weighted AL. Nothing else of a table may change.
RENAMED = {
    "Mean accepted length": "Mean accepted length (step-weighted)",
    "Acceptance length by output position": (
        "Acceptance length by output position (chunk estimate)"
    ),
}


def test_report_renders_every_table_main_rendered(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = run_cli("report", RESULTS, "--out", out, "--format", "md,json")
    assert done.returncode == 0, done.stderr
    tables = json.loads((out / "tables.json").read_text())
    built = {table["name"]: table for table in tables["tables"]}
    main = json.loads((RECORDED / "report-tables.json").read_text())
    markdown = (out / "report.md").read_text()
    # Each table main rendered is rendered again, same title, columns and rows (a later
    # report may add a row, or columns after main's, as the per-domain speedup's Timed and
    # Not timed counts; none of main's may change or vanish).
    for table in main["tables"]:
        assert table["name"] in built, table["name"]
        again = built[table["name"]]
        width = len(table["columns"])
        # Issue 42 names every AL by its definition (`RENAMED`); the rows are main's.
        columns = [RENAMED.get(column, column) for column in table["columns"]]
        title = RENAMED.get(table["title"], table["title"])
        assert (again["title"], again["columns"][:width]) == (title, columns)
        if table["name"].startswith("domain_speedup_"):
            # Issue 38 changed this table's figures on purpose: its proxy's step times pool
            # only requests with a decode time (before, E2E = TTFT added steps at 0 ms), and a
            # domain with no timed request is shown as n/a, not dropped.
            assert len(again["rows"]) >= len(table["rows"]), table["name"]
            continue
        rows = [row[:width] for row in again["rows"]]
        missing = [row for row in table["rows"] if row not in rows]
        assert missing == [], table["name"]
        assert table["title"] in markdown
    # Issue 38: a per-domain speedup with no timed request is built, with n/a rows.
    kept = {note for note in main["not_built"] if not note.startswith("per-domain speedup")}
    assert kept <= set(tables["not_built"])


def test_a_rerun_finds_every_cell_complete_and_measures_nothing(tmp_path: Path) -> None:
    out = tmp_path / "results"
    shutil.copytree(RESULTS, out)
    before = file_hashes(out)
    assert len(before) == 6 * 2 + 2  # summary and requests per cell, two server logs
    dry = run_cli("run", SUITE, "--output", out, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert (
        f"suite main-408c852 ({SUITE}): 6 of its 6 cells selected; 6 already complete in "
        f"{out}; 0 to measure"
    ) in dry.stdout
    assert dry.stdout.count("not started: every cell is complete") == 2

    rerun = run_cli("run", SUITE, "--output", out)
    assert rerun.returncode == 0, rerun.stderr
    assert "0 cells measured, 6 already complete, 0 failed" in rerun.stdout
    assert "starting" not in rerun.stdout + rerun.stderr  # no server was started
    assert file_hashes(out) == before  # every cell's files, byte for byte
    # The manifest is written again but records nothing new: no run, no cell, same suite.
    assert unstamped_manifest(out) == unstamped_manifest(RESULTS)


def test_main_s_cells_are_launch_0_of_a_suite_grown_to_two_launches() -> None:
    # Issue 39: launches came after main; its directory is launch 0 of any number of them.
    grown = load_suite(SUITE, ["launches=2"])
    manifest = read_manifest(RESULTS)
    assert manifest is not None and suite_hash(grown) == manifest.suite_hash
    complete = [c.key for c in grown.expand() if is_complete(cell_directory(RESULTS, c))]
    to_measure = [c.key for c in grown.expand() if c.key not in complete]
    assert complete == CELLS
    assert to_measure == [key.replace("/r0", "/l1/r0") for key in CELLS]
    assert {cell.summary.launch for cell in load_cells([RESULTS])[0]} == {0}
