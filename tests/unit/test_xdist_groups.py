"""`make test`'s xdist groups (tests/conftest.py): read from a real collection of the tree.

Every real-vLLM test is in group `vllm` and every real-Slurm test in group `slurm` (one
pool of servers, one test Slurm: one worker each); the tests sharing a module's campaign
are in that module's group; a test that shares nothing costly is in none, so any worker
may take it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Collects the given paths and prints {nodeid: [group, markers]} as JSON on its last line.
COLLECT = """
import json, sys, pytest
class Groups:
    def pytest_collection_finish(self, session):
        self.groups = {
            item.nodeid: [
                [m.args[0] for m in item.iter_markers("xdist_group")],
                sorted({m.name for m in item.iter_markers()}),
            ]
            for item in session.items
        }
groups = Groups()
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[1:]],
                   plugins=[groups])
print(json.dumps(groups.groups))
sys.exit(code)
"""


def collected_groups(*paths: str) -> dict[str, tuple[list[str], list[str]]]:
    done = subprocess.run(
        [sys.executable, "-c", COLLECT, *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return {k: (v[0], v[1]) for k, v in json.loads(done.stdout.splitlines()[-1]).items()}


def test_shared_servers_and_campaigns_each_keep_to_one_group() -> None:
    groups = collected_groups("tests/e2e", "tests/unit/data_prepare/test_data_dir.py")
    by_marker = {"vllm": set(), "slurm": set()}  # the groups their tests were given
    for nodeid, (group, markers) in groups.items():
        assert len(group) <= 1, nodeid  # two marks would join into a third group
        for marker in by_marker:
            if marker in markers:
                by_marker[marker].add(tuple(group))
    assert by_marker == {"vllm": {("vllm",)}, "slurm": {("slurm",)}}
    assert sum(g == ["vllm"] for g, _ in groups.values()) >= 10
    # The tests on report_dir (one campaign per module) share a group; the bad results
    # folders (each its own tmp_path) are in none.
    browser = {n: g for n, (g, _) in groups.items() if "test_report_html_browser" in n}
    shared = ["tests/e2e/test_report_html_browser.py"]
    assert (
        browser["tests/e2e/test_report_html_browser.py::test_the_pdf_print_holds_every_table[A4]"]
        == shared
    )
    assert all(g == [] for n, g in browser.items() if "bad_results_folders" in n)
    # A session fixture of a conftest directory: its group is named for the fixture.
    prepared = "tests/unit/data_prepare::prepared"
    data_dir = {n.split("::")[1]: g for n, (g, _) in groups.items() if "test_data_dir" in n}
    assert data_dir[
        "test_card_dry_run_passes_on_the_prepared_folder_and_fails_on_placeholders"
    ] == [prepared]
    assert data_dir["test_with_data_dir_maps_only_speed_bench_specs_without_a_path"] == []
