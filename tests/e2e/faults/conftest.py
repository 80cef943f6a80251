"""The fault cases' shared setup: a finished campaign, a saved baseline and an emulator,
each started once per session when a case first needs it; each case's scratch folder; and
the case's row (id, name, expected, observed, the test injecting it) as properties of its
JUnit XML testcase, which tools/faults_table.py turns into docs/faults.md's table.

    pytest -m faults                                  # every case
    pytest -m "faults and not fault_server"           # the cases that start no server
    pytest -m faults --junitxml=faults.xml && python tools/faults_table.py faults.xml
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_scratch import RECORDED_RUN, FaultCase, Observed, Scratch
from harness import run_cli, running_emulator, summary_bytes, write_campaign_suite


@pytest.fixture(scope="session")
def complete_campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 4-cell campaign (suite.toml, results/); cases work on copies."""
    folder = tmp_path_factory.mktemp("complete-campaign")
    suite, _ = write_campaign_suite(folder, step_ms=1.0, concurrency=(1, 2), max_tokens=8)
    out = folder / "results"
    done = run_cli("run", suite, "--output", out, timeout=300)
    assert done.returncode == 0 and len(summary_bytes(out)) == 4, (
        f"the reference campaign failed: {done.stderr[-500:]}"
    )
    return folder


@pytest.fixture(scope="session")
def recorded_baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`baseline save` of the recorded real-vLLM run."""
    baseline = tmp_path_factory.mktemp("baseline") / "baseline.json"
    done = run_cli("baseline", "save", RECORDED_RUN, "--out", baseline, timeout=300)
    assert done.returncode == 0, f"baseline save failed: {done.stderr[-500:]}"
    return baseline


@pytest.fixture(scope="session")
def short_context_emulator() -> Iterator[str]:
    """An emulator serving max_model_len 64: `bench` inputs refused at a live server."""
    with running_emulator("--model", "m", "--max-model-len", "64") as url:
        yield url


@pytest.fixture
def scratch(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Scratch]:
    scratch = Scratch(tmp_path, request)
    try:
        yield scratch
    finally:
        scratch.close()


@pytest.fixture(autouse=True)
def observe(request: pytest.FixtureRequest) -> Iterator[Observed]:
    """What the case observed; with the case's data, the properties of its testcase."""
    observed = Observed()
    yield observed
    params = getattr(request.node, "callspec", None)
    fault = params.params.get("case") if params is not None else None
    if isinstance(fault, FaultCase):
        # user_properties directly: the record_property fixture warns under JUnit's xunit2.
        request.node.user_properties.extend(
            [
                ("case_id", fault.id),
                ("kind", fault.kind),
                ("name", fault.name),
                ("expected", fault.expected),
                ("tests", fault.tests),
                ("observed", observed.text),
            ]
        )
