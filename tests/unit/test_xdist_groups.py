"""`make test`'s xdist groups (tests/conftest.py): read from a real collection of the tree,
and kept by a real `pytest -n 3 --dist loadgroup`.

Every real-vLLM test of the server pool is in group `vllm` and every real-Slurm test in
group `slurm` (one pool of servers, one test Slurm: one worker each); a real-vLLM test that
starts no pool server is not; the tests sharing a module's campaign
are in that module's group; a test that shares nothing costly is in none, so any worker
may take it. pytest-xdist 3.8 on pytest 9.2 drops the groups without a word
(pytest-dev/pytest-xdist#1386): the run below is what would say so.
"""

from __future__ import annotations

import json
import os
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


#: The real-vLLM tests that start their own vLLM (or none) instead of the pool's.
OWN_VLLM = (
    "::test_bad_flag_fails_fast_quoting_vllm",
    "::test_vllm_accepts_a_schedule_in_the_speculative_config",
    "::test_a_build_is_byte_identical_to_the_session_models_and_matches_the_manifest",
)


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
    own_vllm = {}  # the real-vLLM tests that start no pool server: the groups they got
    for nodeid, (group, markers) in groups.items():
        assert len(group) <= 1, nodeid  # two marks would join into a third group
        if nodeid.endswith(OWN_VLLM):
            own_vllm[nodeid.rsplit("::", 1)[1]] = group
            continue
        for marker in by_marker:
            if marker in markers:
                by_marker[marker].add(tuple(group))
    assert by_marker == {"vllm": {("vllm",)}, "slurm": {("slurm",)}}
    assert sum(g == ["vllm"] for g, _ in groups.values()) >= 10
    # Any worker may take them beside the pool's (a group of their module's fixtures, or none).
    assert own_vllm == {
        "test_bad_flag_fails_fast_quoting_vllm": ["tests/e2e/test_launch_vllm.py"],
        "test_vllm_accepts_a_schedule_in_the_speculative_config": ["tests/e2e/test_launch_vllm.py"],
        "test_a_build_is_byte_identical_to_the_session_models_and_matches_the_manifest": [],
    }
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


NO_PLUGINS = ("-p", "no:cacheprovider", "-p", "no:randomly")
GROUPED_TESTS = """
import os, time, pytest
from pathlib import Path

def record(name):
    (Path(__file__).parent / "workers" / name).write_text(os.environ["PYTEST_XDIST_WORKER"])
    time.sleep(0.2)

@pytest.fixture(scope="session")
def vllm_servers():
    return "the pool"

@pytest.mark.vllm
@pytest.mark.parametrize("i", range(4))
def test_vllm(i, vllm_servers):
    record(f"vllm-{i}")

@pytest.mark.vllm
def test_vllm_of_its_own():
    record("own-0")

@pytest.mark.slurm
@pytest.mark.parametrize("i", range(4))
def test_slurm(i):
    record(f"slurm-{i}")

@pytest.mark.parametrize("i", range(6))
def test_free(i):
    record(f"free-{i}")
"""


def test_an_xdist_run_keeps_each_group_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n  vllm\n  slurm\n")
    # This tree's own hook, in a conftest of its own.
    (tmp_path / "conftest.py").write_text(
        "import runpy\n"
        f"hooks = runpy.run_path({str(ROOT / 'tests' / 'conftest.py')!r})\n"
        "pytest_collection_modifyitems = hooks['pytest_collection_modifyitems']\n"
    )
    (tmp_path / "test_grouped.py").write_text(GROUPED_TESTS)
    (tmp_path / "workers").mkdir()
    path = os.pathsep.join(str(ROOT / p) for p in ("tests", "tools", "."))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-n", "3", "--dist", "loadgroup", *NO_PLUGINS],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "PASSED test_grouped.py::test_vllm[0]@vllm" in done.stdout, done.stdout[-3000:]
    workers: dict[str, set[str]] = {}
    for record in (tmp_path / "workers").iterdir():
        workers.setdefault(record.name.split("-")[0], set()).add(record.read_text())
    assert len(workers["vllm"]) == 1 and len(workers["slurm"]) == 1, workers
    assert len(list((tmp_path / "workers").iterdir())) == 15
