"""The pilot's plan: derived from the campaign's, measured apart, read by the same estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from specbench.common.errors import SpecbenchError
from specbench.data.conversation import Conversation
from specbench.measure.precision import stratified_order
from specbench.run.cells import cell_conversations
from specbench.run.pilot import (
    PilotSettings,
    WorkloadFacts,
    check_output,
    default_output,
    pilot_conversations,
    pilot_plan,
)
from specbench.run.plan import RunOptions, plan_suite, suite_hash
from specbench.suite import load_suite

from .pilot_resume_suites import suite_text

SUITE = suite_text(
    "card",
    top="repeats = 2\n",
    workloads="""[[workloads]]
dataset = "mt-bench"
concurrency = [1, 2, 4, 8, 16, 32, 64, 128]
max_tokens = 64
precision = 0.02
full_set_concurrency = 128
[[workloads]]
name = "long"
dataset = "mt-bench"
concurrency = [4, 16]
max_tokens = 512
max_model_len = 4096
""",
)

#: The card's qualitative split: 880 conversations, 11 categories; the second is smaller.
FACTS = {"mt-bench": WorkloadFacts(880, 11), "long": WorkloadFacts(40, 8)}


def campaign(tmp_path: Path, **options: object):
    path = tmp_path / "suite.toml"
    path.write_text(SUITE)
    suite = load_suite(path)
    return plan_suite(suite, RunOptions(output=tmp_path / "results", **options))


def test_pilot_sizes_are_a_few_per_slot_every_category_and_capped():
    card = FACTS["mt-bench"]
    assert pilot_conversations(1, card, size=3) == 32  # the floor, not 3
    assert pilot_conversations(1, WorkloadFacts(880, 40), size=3) == 40  # one per category
    assert pilot_conversations(1, card, size=3, floor=5) == 11
    assert pilot_conversations(16, card, size=3) == 48
    assert pilot_conversations(128, card, size=3) == 384
    assert pilot_conversations(128, card, size=3, cap=200) == 256  # never below 2 per slot
    assert pilot_conversations(128, card, size=10) == 880  # never beyond the workload
    assert pilot_conversations(64, WorkloadFacts(5000, 11), size=50, cap=1024) == 1024
    with pytest.raises(SpecbenchError, match="--pilot-size: allowed: at least 1, got 0"):
        pilot_conversations(1, card, size=0)


def test_the_pilot_measures_each_server_and_workload_at_each_of_its_concurrencies(
    tmp_path: Path,
):
    plan = campaign(tmp_path)
    # The seven precision-targeted levels plan three launches each (the full-set one and
    # the second workload one), two repeats each, on two servers.
    assert len(plan.cells) == 2 * (7 * 3 + 1 + 2) * 2
    pilot = pilot_plan(plan, PilotSettings(tmp_path / "p"), FACTS)
    assert pilot.command == "pilot"
    sizes = {1: 32, 2: 32, 4: 32, 8: 32, 16: 48, 32: 96, 64: 192, 128: 384}
    assert [(c.key, c.conversations) for c in pilot.cells] == [
        *((f"baseline/mt-bench/c{c}/r0", n) for c, n in sizes.items()),
        ("baseline/long/c4/r0", 32),
        ("baseline/long/c16/r0", 40),
        *((f"eagle3/mt-bench/c{c}/r0", n) for c, n in sizes.items()),
        ("eagle3/long/c4/r0", 32),
        ("eagle3/long/c16/r0", 40),
    ]
    # Same servers, keys and launches (max_model_len per workload) as the campaign.
    assert pilot.servers == plan.servers
    assert pilot.keys == plan.keys == ("mt-bench", "long")
    assert [pilot.launch_config(c).max_model_len for c in pilot.cells[8:10]] == [4096, 4096]
    # Each pilot cell measures a fixed number of conversations: no precision target.
    assert all(w.precision is None and w.full_set_concurrency is None for w in pilot.workloads)
    assert [w.max_tokens for w in pilot.workloads] == [64, 512]
    # Its suite says it is a pilot and hashes apart: a `run` into its directory is refused.
    assert pilot.suite is not None and plan.suite is not None
    assert pilot.suite.name == plan.suite.name
    assert (pilot.suite.description or "").startswith("PILOT of suite 'card'")
    assert suite_hash(pilot.suite) != suite_hash(plan.suite)


def test_chosen_concurrencies_and_the_campaign_selection_carry_over(tmp_path: Path):
    plan = campaign(tmp_path, servers=("eagle3",), workloads=("mt-bench",))
    settings = PilotSettings(tmp_path / "p", size=4, concurrencies=(32, 4, 32))
    pilot = pilot_plan(plan, settings, FACTS)
    assert [(c.key, c.conversations) for c in pilot.cells] == [
        ("eagle3/mt-bench/c4/r0", 32),
        ("eagle3/mt-bench/c32/r0", 128),
    ]
    other = pilot_plan(plan, PilotSettings(tmp_path / "p", size=5), FACTS)
    assert pilot.suite is not None and other.suite is not None
    assert suite_hash(pilot.suite) != suite_hash(other.suite)  # another shape, another hash


def test_a_pilot_cell_measures_the_first_conversations_of_the_stratified_order(tmp_path: Path):
    conversations = [
        Conversation(question_id=f"{category}-{i}", category=category, turns=["q"])
        for category, size in (("chat", 6), ("code", 15), ("math", 24))
        for i in range(size)
    ]
    plan = campaign(tmp_path)
    pilot = pilot_plan(plan, PilotSettings(tmp_path / "p"), FACTS)
    cell = pilot.cells[0]
    assert cell.conversations == 32
    chosen = cell_conversations(cell, pilot.workload(cell), conversations)
    assert list(chosen) == stratified_order(conversations, 0)[:32]
    # Every category in proportion: 6, 15 and 24 of 45 → about 4, 11 and 17 of 32.
    counts = [sum(c.category == name for c in chosen) for name in ("chat", "code", "math")]
    assert all(abs(a - b) <= 1 for a, b in zip(counts, [4, 11, 17], strict=True))
    assert {c.category for c in chosen} == {"chat", "code", "math"}
    # A campaign cell measures every conversation, in the given order.
    assert cell_conversations(plan.cells[0], plan.workload(plan.cells[0]), conversations) == (
        conversations
    )


def test_the_pilot_directory_lies_beside_the_results_never_inside(tmp_path: Path):
    results = tmp_path / "results" / "card"
    assert default_output(results) == tmp_path / "results" / "card.pilot"
    check_output(default_output(results), results)
    for bad in (results, results / ".pilot", tmp_path / "results"):
        with pytest.raises(SpecbenchError, match=r"--pilot-output .*: must lie outside"):
            check_output(bad, results)
